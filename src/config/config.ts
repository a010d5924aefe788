// The configuration: `<home>/config.json` (JSON with comments), validated by one zod schema (schema.ts) in
// which every key has a default, then secrets from the environment. A bad file is a ConfigError
// that names the file and the key path, never a half-valid config.
import { CONFIGURABLE } from "../channels/registry.ts";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseJsonc, printParseErrorCode, stripComments, type ParseError } from "jsonc-parser";
import { z } from "zod";
import { PROVIDER_KEY_ENVS, PROVIDER_PRESETS, splitModelName } from "../agent/providers/presets.ts";
import { registerSecret } from "../process/log.ts";
import { CREDENTIAL_KEY, isReference, placesOf, secretFields } from "../fields/secret-fields.ts";
import { expandHome, homePaths } from "./home.ts";
import { ConfigError } from "./config-error.ts";
import { logLevels } from "../fields/config-fields.ts";
import { migrateConfigText } from "./migrations.ts";
import { readSecrets, withSecrets } from "./secrets.ts";
import { configSchema, type Config } from "./schema.ts";
import type { EgressRules } from "../egress/policy.ts";

type Env = Record<string, string | undefined>;

// ── loading ────────────────────────────────────────────────────────────────────────────────

export { ConfigError } from "./config-error.ts";

export interface LoadConfigOptions {
  home: string;
  /** Where secrets and HEARTH_LOG come from; defaults to process.env. */
  env?: Env;
}

/**
 * Reads `<home>/config.json` (a missing file means all defaults), brings an older version to the
 * current one in memory (migrations.ts; `hearth start` writes it), and validates it with the
 * environment over the home's secrets file (`.env`). Throws ConfigError (NewerConfigError for a
 * file from a newer Hearth).
 */
export function loadConfig({ home, env = process.env }: LoadConfigOptions): Config {
  const file = homePaths(home).config;
  const { raw, secrets } = readConfigFile(file);
  return parseConfig(raw, { home, env: { ...secrets, ...withSecrets(home, env) }, file });
}

/**
 * The variables a command runs with, as `hearth start` has them once it migrated config.json:
 * the home's `.env`, and the secrets a migration of an older config.json moves there (this
 * command migrates in memory only, and the file keeps `${VAR}` references to them), under `env`,
 * which wins. Throws ConfigError for a config.json that cannot be read.
 */
export function homeEnv(home: string, env: Env = process.env): Env {
  return { ...readConfigFile(homePaths(home).config).secrets, ...readSecrets(home), ...env };
}

/**
 * Puts homeEnv's variables into `env` (the process's) where it has none: what runs servers or a
 * gateway here (`hearth mcp`, chat's embedded gateway) then expands `${VAR}` as the daemon does.
 */
export function applyHomeEnv(home: string, env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(homeEnv(home, {}))) if (value !== undefined && !env[name]?.trim()) env[name] = value;
}

/** `"$schema"` names the JSON Schema editors check the file against (init.ts writes it): not Hearth's. */
function withoutSchemaKey(raw: unknown): unknown {
  if (!isObject(raw) || !("$schema" in raw)) return raw;
  const { $schema: _editors, ...rest } = raw;
  return rest;
}

/**
 * Validates an already-parsed config value: applies env overrides (env wins), resolves the
 * workspace against `home`, registers secrets with the log redactor. Throws ConfigError.
 */
export function parseConfig(raw: unknown, opts: LoadConfigOptions & { file?: string }): Config {
  const env = opts.env ?? process.env;
  const file = opts.file ?? homePaths(opts.home).config;
  const { value, fromEnv } = applyEnv(withoutSchemaKey(raw), env);
  registerSecrets(value);
  const keyEnvAt = (section: string, key: string): string[] => {
    const node = isObject(value) && isObject(value[section]) ? (value[section] as JsonObject)[key] : undefined;
    return isObject(node) && typeof node.apiKeyEnv === "string" ? [node.apiKeyEnv] : [];
  };
  for (const variable of [...PROVIDER_KEY_ENVS, TRANSCRIPTION_KEY_ENV, ...keyEnvAt("voice", "tts"), ...keyEnvAt("memory", "embeddings")]) {
    const key = env[variable]?.trim();
    if (key) registerSecret(key);
  }
  const result = configSchema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => {
      const variable = fromEnv.get(issue.path.join("."));
      return variable ? { ...issue, message: `${issue.message} (the value comes from ${variable})` } : issue;
    });
    throw new ConfigError(file, z.prettifyError(new z.ZodError(issues)));
  }
  const config = result.data;
  const problems = resolveProviders(config, env);
  if (problems.length > 0) throw new ConfigError(file, problems.map((p) => `✖ ${p.message}\n  → at ${p.path}`).join("\n"));
  config.workspace = path.resolve(opts.home, expandHome(config.workspace, env));
  // The old key, read for one more version (migration 2 → 3 moves it in the file).
  for (const h of config.tools.web.fetch.allowPrivate) if (!config.egress.allowPrivate.includes(h)) config.egress.allowPrivate.push(h);
  // The home holds the keys (config.json) and every chat's transcript: no tool that works inside
  // the workspace (send_file, markdown images, memory, a shared scope's read) may reach it.
  const home = path.resolve(opts.home);
  const fromWorkspace = path.relative(config.workspace, home);
  if (fromWorkspace === "" || (!fromWorkspace.startsWith("..") && !path.isAbsolute(fromWorkspace))) {
    throw new ConfigError(file, `✖ the workspace ${config.workspace} contains Hearth's home folder ${home}, which holds its keys and every chat's transcript; choose a folder inside the home (the default, "workspace") or beside it\n  → at workspace`);
  }
  return config;
}

/** The file's value at the current version, and the secrets a migration took out of it. */
function readConfigFile(file: string): { raw: unknown; secrets: Record<string, string> } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { raw: {}, secrets: {} };
    throw new ConfigError(file, `✖ cannot read the file (${code ?? (err as Error).message})`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (stripComments(text).trim() === "") return { raw: {}, secrets: {} };
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) throw new ConfigError(file, describeSyntaxErrors(text, errors));
  const plan = migrateConfigText(text, file);
  return { raw: parseJsonc(plan.text, [], { allowTrailingComma: true }), secrets: plan.secrets };
}

// Positions only, never the offending text: the line may hold a token.
function describeSyntaxErrors(text: string, errors: ParseError[]): string {
  const shown = errors.slice(0, 3).map((e) => {
    const before = text.slice(0, e.offset);
    const line = before.split("\n").length;
    const column = e.offset - before.lastIndexOf("\n");
    const problem = printParseErrorCode(e.error).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
    return `✖ JSON syntax error at line ${line}, column ${column}: ${problem}`;
  });
  if (errors.length > 3) shown.push(`  (and ${errors.length - 3} more, probably caused by the first)`);
  return shown.join("\n");
}

/** The transcription key's variable, when config has no media.transcription.apiKey. */
export const TRANSCRIPTION_KEY_ENV = "HEARTH_TRANSCRIPTION_API_KEY";

const envOverrides: { variable: string; path: string[] }[] = [
  { variable: "ANTHROPIC_API_KEY", path: ["model", "apiKey"] },
  { variable: "ANTHROPIC_BASE_URL", path: ["model", "baseUrl"] },
  // Each chat channel's credentials (its descriptor's): TELEGRAM_BOT_TOKEN → channels.telegram.token.
  ...CONFIGURABLE.flatMap((c) => (c.credentials ?? []).map((k) => ({ variable: k.variable, path: ["channels", c.id, k.key] }))),
  { variable: "BRAVE_API_KEY", path: ["tools", "web", "search", "apiKey"] },
];

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Copies `raw` with the environment's values set; records which key paths came from which variable. */
function applyEnv(raw: unknown, env: Env): { value: unknown; fromEnv: Map<string, string> } {
  const fromEnv = new Map<string, string>();
  if (!isObject(raw)) return { value: raw, fromEnv };
  const value = structuredClone(raw);
  const set = (keys: string[], v: string, variable: string) => {
    let node = value;
    for (const key of keys.slice(0, -1)) {
      node[key] ??= {};
      const next = node[key];
      if (!isObject(next)) return; // a malformed section: let the schema report it
      node = next;
    }
    node[keys[keys.length - 1]!] = v;
    fromEnv.set(keys.join("."), variable);
  };
  for (const { variable, path: keys } of envOverrides) {
    const v = env[variable]?.trim();
    if (v) set(keys, v, variable);
  }
  const level = env.HEARTH_LOG?.trim().toLowerCase();
  if (level && (logLevels as readonly string[]).includes(level)) set(["log", "level"], level, "HEARTH_LOG");
  return { value, fromEnv };
}

/** Anthropic's cheapest current model: the heartbeat's default when model.name is Anthropic's. */
export const DEFAULT_HEARTBEAT_MODEL = "claude-haiku-4-5";

/**
 * The heartbeat's model: `heartbeat.model`, else the cheapest model of model.name's provider —
 * a Haiku for Anthropic; for another provider (a local server, OpenRouter…) Hearth knows no
 * cheaper sibling, so the main model itself.
 */
export function heartbeatModel(config: Config): string {
  if (config.heartbeat.model) return config.heartbeat.model;
  return splitModelName(config.model.name).provider === "anthropic" ? DEFAULT_HEARTBEAT_MODEL : config.model.name;
}

/**
 * The per-purpose models (`compaction.model`, `heartbeat.model`, `tasks.model`) by key path, where config has
 * them: they name models of any provider, like model.name.
 */
export function purposeModels(config: Config): Record<"compaction.model" | "heartbeat.model" | "tasks.model", string | undefined> {
  const c = config as { compaction?: { model?: unknown }; heartbeat?: { model?: unknown }; tasks?: { model?: unknown } };
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
  return { "compaction.model": str(c.compaction?.model), "heartbeat.model": str(c.heartbeat?.model), "tasks.model": str(c.tasks?.model) };
}

/**
 * Completes `config.providers`: every provider a model name refers to gets an entry (a preset
 * fills type and base URL), every entry its type and its key from the environment. Returns the
 * names that refer to no provider, by key path.
 */
function resolveProviders(config: Config, env: Env): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const names: [string, string][] = [["model.name", config.model.name], ...config.model.fallbacks.map((n, i): [string, string] => [`model.fallbacks.${i}`, n])];
  for (const [at, name] of Object.entries(purposeModels(config))) if (name) names.push([at, name]);
  for (const [at, name] of names) {
    const { provider, model } = splitModelName(name);
    if (!model) problems.push({ path: at, message: `"${name}" names no model after "${provider}/"` });
    else if (!config.providers[provider] && !PROVIDER_PRESETS[provider]) {
      problems.push({ path: at, message: `unknown provider "${provider}" in "${name}": add providers.${provider} or use one of ${Object.keys(PROVIDER_PRESETS).join(", ")}` });
    } else config.providers[provider] ??= { models: {} };
  }
  for (const [name, p] of Object.entries(config.providers)) {
    const preset = PROVIDER_PRESETS[name];
    if (!p.type && !preset) {
      problems.push({ path: `providers.${name}.type`, message: `"${name}" is not a preset provider: set "type" to "anthropic" or "openai"` });
      continue;
    }
    p.type ??= preset!.type;
    if (name === "anthropic") {
      // The Anthropic provider keeps the keys it always had.
      p.baseUrl ??= config.model.baseUrl;
      p.apiKey ??= config.model.apiKey;
    }
    if (p.type === "openai" && !p.baseUrl) {
      if (preset?.baseUrl) p.baseUrl = preset.baseUrl;
      else problems.push({ path: `providers.${name}.baseUrl`, message: `an OpenAI-compatible provider needs a baseUrl, e.g. "http://127.0.0.1:8080/v1"` });
    }
    const keyEnv = p.apiKeyEnv ?? preset?.keyEnv;
    const fromEnv = keyEnv ? env[keyEnv]?.trim() : undefined;
    if (!p.apiKey && fromEnv) p.apiKey = fromEnv;
    // A key from the environment; the file's own keys and headers were registered by their marks.
    if (p.apiKey) registerSecret(p.apiKey);
  }
  return problems;
}

/**
 * Registers every secret written in the file with the log redactor: the values of the fields the
 * schema marks (src/fields/secret-fields.ts), and of the marked maps (headers, environment variables)
 * those whose key names a credential — a map's other values (a content type, a path) are not
 * secrets, and redacting them would blank ordinary words from the log.
 */
function registerSecrets(value: unknown): void {
  for (const field of secretFields(configSchema)) {
    for (const at of placesOf(field, value)) {
      if (typeof at.value !== "string" || isReference(at.value)) continue;
      if (field.mark.secret === "map" && !CREDENTIAL_KEY.test(at.path.at(-1)!)) continue;
      registerSecret(at.value);
      registerSecret(at.value.trim());
      registerSecret(at.value.replace(/^(?:Bearer|Basic)\s+/i, ""));
    }
  }
}

/**
 * The egress rules the daemon applies: `config.egress`, with every SSH exec host
 * (`tools.exec.hosts`, its address and port) among the owner's own destinations.
 */
export function egressRules(config: Config): EgressRules {
  const hosts = Object.values(config.tools.exec.hosts).map((h) => `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`);
  return hosts.length === 0 ? config.egress : { ...config.egress, own: [...config.egress.own, ...hosts] };
}
