// What a backup holds: every regular file of the home, read so that each one is whole even while
// the daemon runs, minus what is rebuilt or must not travel. The choice lives here, in one place,
// so `create`, the scheduled backup and the tests agree on it.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, constants } from "node:fs";
import path from "node:path";
import { applyEdits, modify, parse as parseJsonc, parseTree, type ParseError } from "jsonc-parser";
import { CONFIG_UPGRADE_COPY } from "../config/home.ts";
import { configSchema } from "../config/schema.ts";
import { isReference, placesOf, secretFields } from "../fields/secret-fields.ts";
import { holdsSecret, identityFiles, knownSecretValues } from "./secret-scan.ts";

/** One file as it goes into the archive. */
export interface SnapshotFile {
  /** Relative to the home, forward slashes. */
  path: string;
  bytes: Buffer;
  /** config.json with its secret values blanked (without --include-secrets). */
  redacted?: string[];
}

/** Something of the home that is not in the archive, and why. */
export interface LeftOut {
  path: string;
  reason: "rebuilt" | "secret" | "runtime" | "not a regular file" | "backups" | "unreadable";
}

export interface SnapshotOptions {
  includeSecrets: boolean;
  /** Folders inside the home that hold backups (never archived again). Absolute paths. */
  backupDirs: string[];
  /** The backup's own work folder, when it lies inside the home: skipped without a word. */
  scratch?: string;
}

/** The search index, the MCP servers' homes (npx's and uvx's caches) and the chat channels' libraries (from npm): remade or installed again. */
const REBUILT = new Set(["index", "mcp-home", "packages"]);
/** The running daemon's lock and socket: meaningless in another process. */
const RUNTIME = new Set(["gateway.lock", "gateway.sock"]);
/** A writer's temp file (`<name>.tmp-<pid>`, storage.ts writeFileAtomic): half a file by design. */
const TEMP_FILE = /\.tmp-\d+$/u;
/** The home's secrets files (`.env`, `secrets.env`, …) at its top level. */
const SECRETS_FILE = /^(\.env(\..+)?|.+\.env|secrets(\..+)?)$/u;
/** The home's folder of MCP servers' OAuth tokens (config/home.ts `mcpAuth`). */
const SECRETS_DIR = "mcp-auth";

/** What the manifest says of a file taken. */
export interface TakenFile {
  path: string;
  size: number;
  sha256: string;
  redacted?: string[];
}

/**
 * Walks the home and reads each file once, handing it to `take` (which stores it) before the
 * next is read, so a large home never sits in memory. Never follows a link. JSON-lines files are
 * cut at their last newline (a record being appended is left for the next backup); other state
 * files are replaced atomically, so one open reads one whole version.
 */
export function snapshotHome(home: string, opts: SnapshotOptions, take: (file: SnapshotFile) => void): { files: TakenFile[]; left: LeftOut[] } {
  const files: TakenFile[] = [];
  const left: LeftOut[] = [];
  const push = (f: SnapshotFile) => {
    take(f);
    files.push({ path: f.path, size: f.bytes.length, sha256: sha256(f.bytes), ...(f.redacted ? { redacted: f.redacted } : {}) });
  };
  const skipDirs = new Set(opts.backupDirs.map((d) => path.resolve(d)));
  const secrets = opts.includeSecrets ? [] : knownSecretValues(home);
  const keyFiles = opts.includeSecrets ? new Set<string>() : identityFiles(home);
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (!st) continue; // removed while we walked
      if (rel === "" && REBUILT.has(name)) {
        left.push({ path: relPath, reason: "rebuilt" });
        continue;
      }
      if (rel === "" && RUNTIME.has(name)) continue;
      if (st.isDirectory()) {
        // MCP servers' OAuth tokens and client secrets: secrets like .env.
        if (rel === "" && name === SECRETS_DIR && !opts.includeSecrets) {
          left.push({ path: relPath, reason: "secret" });
          continue;
        }
        if (opts.scratch && abs === path.resolve(opts.scratch)) continue;
        if (skipDirs.has(abs)) left.push({ path: relPath, reason: "backups" });
        else walk(abs, relPath);
        continue;
      }
      if (!st.isFile()) {
        left.push({ path: relPath, reason: "not a regular file" });
        continue;
      }
      if (TEMP_FILE.test(name)) continue;
      if ((rel === "" && SECRETS_FILE.test(name) && !opts.includeSecrets) || keyFiles.has(abs)) {
        left.push({ path: relPath, reason: "secret" });
        continue;
      }
      const bytes = readWhole(abs);
      if (!bytes) {
        left.push({ path: relPath, reason: "unreadable" });
        continue;
      }
      // The copy an upgrade kept of an older config.json holds the keys the upgrade moved to .env.
      if (rel === "" && CONFIG_UPGRADE_COPY.test(name) && !opts.includeSecrets && withoutSecrets(bytes.toString("utf8")).redacted.length) {
        left.push({ path: relPath, reason: "secret" });
        continue;
      }
      if (rel === "" && name === "config.json" && !opts.includeSecrets) {
        const { text, redacted } = withoutSecrets(bytes.toString("utf8"));
        const blanked = Buffer.from(text, "utf8");
        // A secret left elsewhere in the file (a comment, a key no mark names) keeps it all out.
        if (holdsSecret(blanked, secrets)) left.push({ path: relPath, reason: "secret" });
        else push(redacted.length ? { path: relPath, bytes: blanked, redacted } : { path: relPath, bytes });
        continue;
      }
      // Any other file is judged by its bytes: a private key, or a secret the configuration knows.
      if (!opts.includeSecrets && holdsSecret(bytes, secrets)) {
        left.push({ path: relPath, reason: "secret" });
        continue;
      }
      push({ path: relPath, bytes: name.endsWith(".jsonl") ? upToRecordBoundary(bytes) : bytes });
    }
  };
  walk(home, "");
  return { files, left };
}

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** Reads a regular file through one descriptor opened without following links; null if that fails. */
function readWhole(abs: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const chunks: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 20);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
    }
    return Buffer.concat(chunks);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The bytes up to and including the last newline: whole records only. */
export function upToRecordBoundary(bytes: Buffer): Buffer {
  const end = bytes.lastIndexOf(0x0a);
  return end === bytes.length - 1 ? bytes : bytes.subarray(0, end + 1);
}

/**
 * config.json with every secret value set to "" (comments and everything else kept), and the
 * keys that were blanked: every field and every entry of every map the schema marks as a secret
 * (src/fields/secret-fields.ts); a value that is only a `${VAR}` reference names a secret without holding
 * one and is kept. A config that does not parse is kept as it is: it holds nothing a start could
 * use, and the owner's comments are worth more than a guess.
 */
export function withoutSecrets(text: string): { text: string; redacted: string[] } {
  const errors: ParseError[] = [];
  const raw: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 && !parseTree(text)) return { text, redacted: [] };
  let out = text;
  const redacted: string[] = [];
  for (const field of secretFields(configSchema)) {
    for (const at of placesOf(field, raw)) {
      if (typeof at.value !== "string" || at.value === "" || isReference(at.value)) continue;
      out = applyEdits(out, modify(out, at.path, "", {}));
      redacted.push(at.path.join("."));
    }
  }
  return { text: out, redacted };
}
