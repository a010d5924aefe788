// config.json's versions. The file carries `"version": N`; an older file is brought to
// CONFIG_VERSION by small steps, each a pure edit of the text (comments and the owner's layout
// kept), so that reading an old file and migrating it in place give the same configuration.
// `hearth start` (and `hearth doctor --fix`) write the result, keeping the file as it was as
// `config.json.v<N>.bak`; every other command migrates in memory only. A file from a newer
// Hearth is refused: guessing at keys it does not know could lose the owner's settings.
// Each step is listed in CHANGELOG.md under the version that introduced it.
import { lstatSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { applyEdits, modify, parse as parseJsonc, stripComments, type ParseError } from "jsonc-parser";
import type { Logger } from "../process/log.ts";
import { writeFileAtomic } from "../state/storage.ts";
import { isReference, placesOf, secretFields, type SecretMove } from "../fields/secret-fields.ts";
import { ConfigError } from "./config-error.ts";
import { CONFIG_VERSION } from "./config-version.ts";
import { homePaths } from "./home.ts";
import { configSchema } from "./schema.ts";
import { writeSecrets } from "./secrets.ts";

export { CONFIG_VERSION };

/** config.json was written by a newer Hearth than this one. The CLI exits 2 with the message. */
export class NewerConfigError extends ConfigError {
  override name = "NewerConfigError";
  readonly version: number;
  constructor(file: string, version: number) {
    super(file, `✖ version ${version} is newer than this Hearth knows (it reads up to version ${CONFIG_VERSION})\n  → at version`);
    this.version = version;
    this.message =
      `${file} is configuration version ${version}, written by a newer Hearth; this one reads versions up to ${CONFIG_VERSION}. ` +
      `Update Hearth (git pull && npm install), or restore the file this version wrote (config.json.v${CONFIG_VERSION}.bak, if an upgrade left one).`;
  }
}

/** What one step did, for the log: "moved model.apiKey to .env as ANTHROPIC_API_KEY". */
export interface StepResult {
  text: string;
  /** Secrets the step took out of the file, by variable name. */
  secrets: Record<string, string>;
  did: string[];
}

interface Migration {
  from: number;
  to: number;
  /** The step, named verb + object. */
  name: string;
  apply(text: string): StepResult;
}

const FORMAT = { insertSpaces: true, tabSize: 2, eol: "\n" };

const setVersion = (text: string, version: number): string =>
  applyEdits(text, modify(text, ["version"], version, { formattingOptions: FORMAT, getInsertionIndex: () => 0 }));

/**
 * The secrets written in config.json and where each goes: every field the schema marks as a secret
 * value (src/fields/secret-fields.ts), wherever the file holds a non-empty one that is not already a
 * `${VAR}` reference.
 */
function secretKeys(raw: Record<string, unknown>): { path: string[]; variable: string; value: string; leaves: ReturnType<SecretMove["leaves"]> }[] {
  const found: { path: string[]; variable: string; value: string; leaves: ReturnType<SecretMove["leaves"]> }[] = [];
  for (const field of secretFields(configSchema)) {
    if (field.mark.secret !== "value") continue;
    const { move } = field.mark;
    for (const at of placesOf(field, raw)) {
      if (typeof at.value !== "string" || !at.value.trim() || isReference(at.value)) continue;
      found.push({ path: at.path, variable: move.variable(at.names, at.holder), value: at.value.trim(), leaves: move.leaves(at.names, at.holder) });
    }
  }
  return found;
}

/** The steps, oldest first: step i goes from version i to i + 1. */
const MIGRATIONS: Migration[] = [
  {
    from: 0,
    to: 1,
    name: "addVersion",
    // Files from before versions: the shape is version 1's; only the number is added.
    apply: (text) => ({ text: setVersion(text, 1), secrets: {}, did: ['added "version": 1'] }),
  },
  {
    from: 1,
    to: 2,
    name: "moveSecretsToEnvFile",
    apply(text) {
      const raw = parseJsonc(text, [], { allowTrailingComma: true }) as Record<string, unknown>;
      const secrets: Record<string, string> = {};
      const did: string[] = [];
      let out = text;
      for (const s of secretKeys(raw)) {
        if (secrets[s.variable] !== undefined && secrets[s.variable] !== s.value) {
          did.push(`kept ${s.path.join(".")} in config.json: ${s.variable} already holds another key`);
          continue;
        }
        secrets[s.variable] = s.value;
        // What stays behind tells Hearth where the value went, unless it looks there anyway.
        const kept = s.leaves.kind === "reference" ? `\${${s.variable}}` : undefined;
        out = applyEdits(out, modify(out, s.path, kept, { formattingOptions: FORMAT }));
        if (s.leaves.kind === "sibling") out = applyEdits(out, modify(out, [...s.path.slice(0, -1), s.leaves.key], s.variable, { formattingOptions: FORMAT }));
        did.push(`moved ${s.path.join(".")} to .env as ${s.variable}`);
      }
      return { text: setVersion(out, 2), secrets, did };
    },
  },
  {
    from: 2,
    to: 3,
    name: "moveAllowPrivateToEgress",
    // One egress policy now judges every connection; the fetch tool's list of private hosts is its.
    apply(text) {
      const raw = parseJsonc(text, [], { allowTrailingComma: true }) as Record<string, unknown>;
      const web = isObject(raw.tools) ? raw.tools.web : undefined;
      const fetch = isObject(web) ? web.fetch : undefined;
      const old = isObject(fetch) && Array.isArray(fetch.allowPrivate) ? fetch.allowPrivate.filter((h): h is string => typeof h === "string") : [];
      let out = text;
      const did: string[] = [];
      if (isObject(fetch) && "allowPrivate" in fetch) {
        out = applyEdits(out, modify(out, ["tools", "web", "fetch", "allowPrivate"], undefined, { formattingOptions: FORMAT }));
        if (old.length > 0) {
          const egress = isObject(raw.egress) ? raw.egress : {};
          const current = Array.isArray(egress.allowPrivate) ? egress.allowPrivate.filter((h): h is string => typeof h === "string") : [];
          out = applyEdits(out, modify(out, ["egress", "allowPrivate"], [...current, ...old.filter((h) => !current.includes(h))], { formattingOptions: FORMAT }));
          did.push(`moved tools.web.fetch.allowPrivate to egress.allowPrivate (${old.join(", ")})`);
        } else {
          did.push("removed the empty tools.web.fetch.allowPrivate (egress.allowPrivate replaces it)");
        }
      }
      return { text: setVersion(out, 3), secrets: {}, did };
    },
  },
];

export interface MigrationPlan {
  /** The version the file has (0: a file from before versions). */
  from: number;
  text: string;
  secrets: Record<string, string>;
  /** One entry per step that ran, in order. */
  steps: { from: number; to: number; name: string; did: string[] }[];
}

/**
 * Brings config.json's text to CONFIG_VERSION, in memory. An empty file (all defaults) needs
 * no step. Throws NewerConfigError for a newer version, ConfigError for a version that is not a
 * whole number; a syntax error is left for the loader to report.
 */
export function migrateConfigText(text: string, file: string): MigrationPlan {
  const plan: MigrationPlan = { from: CONFIG_VERSION, text, secrets: {}, steps: [] };
  if (stripComments(text).trim() === "") return plan;
  const errors: ParseError[] = [];
  const raw: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || !isObject(raw)) return plan;
  const version = raw.version ?? 0;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
    throw new ConfigError(file, `✖ "version" must be a whole number (this Hearth writes ${CONFIG_VERSION})\n  → at version`);
  }
  if (version > CONFIG_VERSION) throw new NewerConfigError(file, version);
  plan.from = version;
  for (const m of MIGRATIONS.slice(version)) {
    const r = m.apply(plan.text);
    plan.text = r.text;
    Object.assign(plan.secrets, r.secrets);
    plan.steps.push({ from: m.from, to: m.to, name: m.name, did: r.did });
  }
  return plan;
}

/** What migrating the file did: the plan, and where the old file was kept, or why nothing was written. */
export type MigratedFile = MigrationPlan & { keptAs: string | null; refused?: string };

/**
 * Migrates `<home>/config.json` in place when it is older than CONFIG_VERSION: the secrets the
 * steps took out go to `<home>/.env` first, then the file as it was is kept as
 * `config.json.v<N>.bak` (an older copy of that name is kept too: this one becomes
 * `config.json.v<N>-2.bak`, `-3`, …), then the new text replaces it atomically. Never follows a
 * link: a config.json that is a symbolic link is migrated in memory only, and said so (writing
 * would replace the link with a file). Logs one line per step. Returns the plan (no steps:
 * nothing was written).
 */
export function migrateConfigFile(home: string, log: Logger): MigratedFile {
  const file = homePaths(home).config;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { from: CONFIG_VERSION, text: "", secrets: {}, steps: [], keptAs: null };
  }
  const plan = migrateConfigText(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, file);
  if (plan.steps.length === 0) return { ...plan, keptAs: null };
  if (lstatSync(file).isSymbolicLink()) {
    const refused = `${file} is a symbolic link; it is read as version ${plan.from} and brought up to date in memory at every start, but never rewritten through the link (replace the link with the file to migrate it)`;
    log.warn("config.not_migrated", { file, from: plan.from, reason: "symbolic link" });
    return { ...plan, keptAs: null, refused };
  }
  if (Object.keys(plan.secrets).length > 0) writeSecrets(home, plan.secrets);
  // The copy is written from the bytes read, to a new name only (O_EXCL: never through a link,
  // never over an older copy), owner-only: it holds the keys this upgrade moves to .env.
  let keptAs = "";
  for (let n = 1; !keptAs; n++) {
    const name = `${file}.v${plan.from}${n === 1 ? "" : `-${n}`}.bak`;
    try {
      writeFileSync(name, text, { flag: "wx", mode: 0o600 });
      keptAs = name;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  writeFileAtomic(file, plan.text, 0o600);
  for (const step of plan.steps) log.info("config.migrated", { file, from: step.from, to: step.to, step: step.name, did: step.did, keptAs });
  return { ...plan, keptAs: path.basename(keptAs) };
}

/** Writes `text` as the current config (used by the wizard): the version set first. */
export function withCurrentVersion(text: string): string {
  return setVersion(text, CONFIG_VERSION);
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
