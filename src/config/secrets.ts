// The home's secrets file, `<home>/.env`: API keys and bot tokens as `NAME=value` lines, mode
// 0600, kept out of config.json (which may be shared, pasted into an issue or backed up). It is
// read at every load of the configuration; a variable set in the real environment wins over it.
import { readFileSync, statSync } from "node:fs";
import { registerSecret } from "../process/log.ts";
import { writeFileAtomic } from "../state/storage.ts";
import { homePaths } from "./home.ts";

type Env = Record<string, string | undefined>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The variables of `<home>/.env`; {} when there is none. Lines are `NAME=value` (an optional
 * `export ` prefix, the value optionally in single or double quotes, `\n` a line break within
 * double quotes); blank lines and `#`
 * comments are skipped, a line of any other shape too (it is never echoed: it may hold a key).
 * Every value is registered with the log redactor.
 */
export function readSecrets(home: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(homePaths(home).secrets, "utf8");
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim().replace(/^export\s+/, "");
    if (!line || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const name = line.slice(0, eq).trim();
    if (!NAME.test(name)) continue;
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      // In double quotes `\n` is a line break (dotenv's rule): how a PEM key fits on one line.
      value = value[0] === '"' ? value.slice(1, -1).replace(/\\n/g, "\n") : value.slice(1, -1);
    }
    if (!value) continue;
    out[name] = value;
    registerSecret(value);
  }
  return out;
}

/** `env` over the home's secrets file: the real environment wins. */
export function withSecrets(home: string, env: Env): Env {
  return { ...readSecrets(home), ...env };
}

/**
 * Puts the secrets file's variables into `env` (the process's, at start) where `env` has none:
 * code that reads a key from the environment directly then finds it too.
 */
export function applySecrets(home: string, env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(readSecrets(home))) if (!env[name]?.trim()) env[name] = value;
}

/**
 * Sets `values` in `<home>/.env` (other lines and comments kept, a name already there replaced
 * in place), written atomically with mode 0600. Returns the names written.
 */
export function writeSecrets(home: string, values: Record<string, string>): string[] {
  const file = homePaths(home).secrets;
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    text = "# Hearth's secrets: API keys and bot tokens, one NAME=value a line. Keep this file private (mode 600).\n";
  }
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const written: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (!NAME.test(name)) throw new Error(`"${name}" is not a variable name`);
    if (/\r/.test(value) || (/\n/.test(value) && /["\\]/.test(value))) throw new Error(`the value of ${name} holds a line break that .env cannot keep`);
    registerSecret(value);
    // A multi-line value (a PEM private key) is written in double quotes with `\n` for each break.
    const line = /\n/.test(value) ? `${name}="${value.replace(/\n/g, "\\n")}"` : `${name}=${value}`;
    const at = lines.findIndex((l) => l.trim().replace(/^export\s+/, "").split("=")[0]?.trim() === name);
    if (at >= 0) lines[at] = line;
    else lines.push(line);
    written.push(name);
  }
  writeFileAtomic(file, `${lines.join("\n")}\n`, 0o600);
  return written;
}

/** The mode of the secrets file, or null when there is none. */
export function secretsMode(home: string): number | null {
  try {
    return statSync(homePaths(home).secrets).mode & 0o777;
  } catch {
    return null;
  }
}
