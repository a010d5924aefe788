// The configuration: `<home>/config.json` (JSON with comments), validated by one zod schema in
// which every key has a default, then secrets from the environment. A bad file is a ConfigError
// that names the file and the key path, never a half-valid config.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseJsonc, printParseErrorCode, stripComments, type ParseError } from "jsonc-parser";
import { z } from "zod";
import { MAX_TURNS_CAP } from "../agent/turn-limit.ts";
import { PROVIDER_KEY_ENVS, PROVIDER_PRESETS, providerTypes, splitModelName } from "../agent/providers/presets.ts";
import { sandboxModes } from "../agent/tools/sandbox.ts";
import { mcpSchema } from "../agent/mcp/config.ts";
import { redact, registerSecret } from "../log.ts";
import { expandHome, homePaths } from "./home.ts";

type Env = Record<string, string | undefined>;

export const queueModes = ["steer", "followup", "collect", "interrupt"] as const;
export type QueueMode = (typeof queueModes)[number];
export const logLevels = ["debug", "info", "warn", "error"] as const;


// ── field schemas ──────────────────────────────────────────────────────────────────────────

/** A strict object whose unknown-key message suggests the key that was probably meant. */
function strict<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) => (iss.code === "unrecognized_keys" ? unknownKeysMessage(iss.keys, known) : undefined),
  });
}

const positiveInt = z.int().min(1);

// Secrets are checked without ever quoting them: these messages end up on a terminal.
const secret = z
  .string()
  .trim()
  .min(1, "is empty")
  .refine((s) => !/\s/.test(s), "must not contain spaces or line breaks (check for a stray character)");

const httpUrl = z
  .url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" })
  .transform((u) => u.replace(/\/+$/, ""));

const timeZone = z
  .string()
  .trim()
  .superRefine((tz, ctx) => {
    if (!isTimeZone(tz)) {
      ctx.addIssue({
        code: "custom",
        message: `"${tz}" is not an IANA time zone (examples: "Europe/Berlin", "America/New_York", "UTC")`,
      });
    }
  })
  .transform((tz) => new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone);

const duration = z.preprocess(
  (v) => (v === 0 ? "0" : v),
  z
    .string()
    .trim()
    .refine((s) => parseDuration(s) !== null, 'expected a duration such as "30m", "1h" or "90s" ("0" turns it off)'),
);

const clockTime = z
  .string()
  .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'expected a time "HH:MM" on a 24-hour clock, e.g. "08:00"');

const namePattern = z
  .string()
  .nullable()
  .superRefine((source, ctx) => {
    if (source === null) return;
    if (source.trim() === "") {
      ctx.addIssue({ code: "custom", message: "an empty pattern would match every message; use null to turn it off" });
      return;
    }
    try {
      new RegExp(source, "i");
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `not a valid regular expression: ${(err as Error).message}` });
    }
  })
  .default(null);

type Platform = "Telegram" | "Discord";

/**
 * A platform id, given as a JSON number or a string, always a string in the output. Discord ids
 * are larger than 2^53: as JSON numbers they have already lost digits, so they must be strings.
 */
function platformId(platform: Platform) {
  const digits = platform === "Telegram" ? /^-?\d+$/ : /^\d+$/;
  return z
    .union([z.string(), z.number()], { error: `expected a ${platform} id (a number or a string of digits)` })
    .transform((v, ctx) => {
      if (typeof v === "number") {
        if (Number.isSafeInteger(v)) return String(v);
        ctx.addIssue({
          code: "custom",
          message: `${v} is not an exact integer: write ${platform} ids as strings, e.g. "1234567890123456789"`,
        });
        return z.NEVER;
      }
      const id = v.trim();
      if (digits.test(id)) return id;
      ctx.addIssue({ code: "custom", message: `"${v}" is not a ${platform} id (ids are numbers, not names)` });
      return z.NEVER;
    });
}

const idList = (platform: Platform) => z.array(platformId(platform)).default([]);

const dmPolicy = z.enum(["pairing", "allowlist", "disabled"]).default("pairing");
/** Pairing codes that may wait for approval at once on one channel (dmPolicy "pairing"). */
const maxPendingPairings = z.number().int().min(1).max(100).default(3);

/** Addressed messages allowed per window in a shared scope; 0 means no limit. */
const rateLimit = (perSender: number, perChat: number) =>
  strict({
    perSender: z.int().min(0).default(perSender),
    perChat: z.int().min(0).default(perChat),
    window: duration.default("1h"),
  }).prefault({});

/** Messages a paired person (shared DM) may send per window; 0 means no limit. */
const dmRateLimit = strict({ perSender: z.int().min(0).default(30), window: duration.default("1h") }).prefault({});

const groupRules = (platform: Platform) =>
  strict({
    policy: z.enum(["allowlist", "open", "disabled"]).default("allowlist"),
    allow: idList(platform),
    requireMention: z.boolean().default(true),
    rateLimit: rateLimit(10, 30),
  }).prefault({});

const usd = z.number().positive("must be a positive amount of US dollars");
const pricePerMillion = z.number().min(0, "must be a price in USD per million tokens (0 or more)");

// ── the schema ─────────────────────────────────────────────────────────────────────────────

const telegramSchema = strict({
  /** Optional here: it may come from TELEGRAM_BOT_TOKEN; without one the channel is not started. */
  token: secret.optional(),
  apiRoot: httpUrl.default("https://api.telegram.org"),
  ownerIds: idList("Telegram"),
  dmPolicy,
  maxPendingPairings,
  allowFrom: idList("Telegram"),
  groups: groupRules("Telegram"),
  dmRateLimit,
  namePattern,
  queueMode: z.enum(queueModes).nullable().default(null),
});

const discordSchema = strict({
  token: secret.optional(),
  apiBase: httpUrl.default("https://discord.com/api"),
  ownerIds: idList("Discord"),
  dmPolicy,
  maxPendingPairings,
  allowFrom: idList("Discord"),
  guilds: groupRules("Discord"),
  dmRateLimit,
  namePattern,
  queueMode: z.enum(queueModes).nullable().default(null),
});

const modelSchema = strict({
  name: z.string().trim().min(1).default("claude-sonnet-5-5"),
  fallbacks: z.array(z.string().trim().min(1)).default([]),
  maxTokens: positiveInt.default(8192),
  contextWindow: positiveInt.default(200_000),
  /** A model stream with no data for this long has stalled: retried once, then the user is told. */
  idleTimeoutMs: positiveInt.min(1000, "must be at least 1000 (one second)").max(600_000, "must be at most 600000 (ten minutes)").default(60_000),
  apiKey: secret.optional(),
  baseUrl: httpUrl.optional(),
}).superRefine((m, ctx) => {
  if (m.maxTokens >= m.contextWindow) {
    ctx.addIssue({ code: "custom", path: ["maxTokens"], message: "must be smaller than model.contextWindow" });
  }
});

/** What Hearth knows about one model of a provider; unset fields take model.* or the provider's defaults. */
const modelSpecSchema = strict({
  contextWindow: positiveInt.optional(),
  maxTokens: positiveInt.optional(),
  /** USD per million tokens, for the cost estimate. */
  pricing: strict({ input: z.number().nonnegative(), output: z.number().nonnegative() }).optional(),
  /** Whether it takes images (default: Anthropic yes, others no). */
  vision: z.boolean().optional(),
  /** false: it cannot call tools, so it runs without them. */
  tools: z.boolean().default(true),
});

/** `providers.<name>`: `type` and `baseUrl` may be left out for a preset name (openai, ollama, …). */
const providerSchema = strict({
  type: z.enum(providerTypes).optional(),
  baseUrl: httpUrl.optional(),
  apiKey: secret.optional(),
  /** The environment variable that holds the key (instead of apiKey). */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name such as MY_API_KEY").optional(),
  headers: z.record(z.string(), z.string()).optional(),
  models: z.record(z.string().min(1), modelSpecSchema).default({}),
});

const providerName = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "a provider name is lowercase letters, digits, - and _ (it is the part before the / in model names)");

const agentSchema = strict({
  maxTurns: positiveInt.max(MAX_TURNS_CAP, `must be at most ${MAX_TURNS_CAP} (the hard cap on turns per run)`).default(25),
  maxConcurrentRuns: positiveInt.default(4),
  queueMode: z.enum(queueModes).default("steer"),
  shutdownGraceMs: z.int().min(0).default(10_000),
  /** A session's in-memory state (transcript view, budget, context) is released after this idle time… */
  releaseIdleAfter: duration.default("30m"),
  /** …or when more sessions than this hold state (the least recently used go first). */
  maxSessionsInMemory: positiveInt.default(500),
});

const domainList = z.array(z.string().trim().min(1)).default([]);
const noBothDomainLists = (w: { allowedDomains: string[]; blockedDomains: string[] }, ctx: z.core.$RefinementCtx) => {
  if (w.allowedDomains.length > 0 && w.blockedDomains.length > 0) ctx.addIssue({ code: "custom", path: ["blockedDomains"], message: "cannot be used together with allowedDomains (pick one)" });
};

/** Web search and fetch (src/agent/tools/web/): the provider's server tools, or Hearth's own ("local"). */
const webSchema = strict({
  search: strict({
    enabled: z.boolean().default(true),
    mode: z.enum(["server", "local"]).default("server"),
    /** Local mode: the search API. Brave needs a key (BRAVE_API_KEY); SearXNG needs `baseUrl`. */
    provider: z.enum(["brave", "searxng"]).default("brave"),
    baseUrl: httpUrl.optional(),
    apiKey: secret.optional(),
    maxUses: positiveInt.max(50).default(5),
    allowedDomains: domainList,
    blockedDomains: domainList,
  }).superRefine(noBothDomainLists).prefault({}),
  fetch: strict({
    enabled: z.boolean().default(true),
    mode: z.enum(["server", "local"]).default("server"),
    maxUses: positiveInt.max(50).default(10),
    allowedDomains: domainList,
    blockedDomains: domainList,
    /** Hosts (names or addresses) local fetching may reach although they are private or loopback. */
    allowPrivate: z.array(z.string().trim().min(1)).default([]),
    timeoutMs: positiveInt.min(1000).max(120_000).default(20_000),
    maxBytes: positiveInt.default(5_000_000),
    maxChars: positiveInt.default(100_000),
  }).superRefine(noBothDomainLists).prefault({}),
});

/**
 * The schema of config.json. Prefer `parseConfig`/`loadConfig`: they also apply the environment,
 * resolve `workspace` against the home folder and register secrets with the log redactor.
 */
export const configSchema = strict({
  workspace: z.string().trim().min(1).default("workspace"),
  timezone: timeZone.default(systemTimeZone),
  model: modelSchema.prefault({}),
  /** Model providers besides Anthropic; presets (openai, openrouter, groq, ollama, lmstudio, vllm) need no entry. */
  providers: z.record(providerName, providerSchema).default({}),
  agent: agentSchema.prefault({}),
  tools: strict({
    exec: strict({
      timeoutMs: positiveInt.default(120_000),
      /** auto: bubblewrap when it works, else unsandboxed; bwrap: refuse to start without it. */
      sandbox: z.enum(sandboxModes).default("auto"),
      /** Whether sandboxed commands may use the network. */
      network: z.boolean().default(true),
    }).prefault({}),
    /** Extra tool names allowed in the shared scope (groups, non-owner DMs). */
    shared: strict({ allow: z.array(z.string().trim().min(1)).default([]) }).prefault({}),
    web: webSchema.prefault({}),
  }).prefault({}),
  /** MCP servers whose tools the agent gets (src/agent/mcp/config.ts). */
  mcp: mcpSchema,
  /** An absent channel is not configured. */
  channels: strict({ telegram: telegramSchema.optional(), discord: discordSchema.optional() }).prefault({}),
  heartbeat: strict({
    every: duration.default("30m"),
    activeHours: strict({ start: clockTime.default("08:00"), end: clockTime.default("22:00") }).prefault({}),
    /** The heartbeat's model; absent: see heartbeatModel(). */
    model: z.string().trim().min(1).optional(),
    maxTokens: positiveInt.default(1024),
    /** No heartbeat after this long without a message from the owner ("0": never pause). */
    pauseAfterIdle: duration.default("7d"),
    /** Tools the heartbeat may use (names, e.g. "memory_search"); none by default, each costs tokens on every tick. */
    tools: z.array(z.string().trim().min(1)).default([]),
  }).prefault({}),
  /** Scheduled work: `fallback` takes answers meant for the terminal while no `hearth chat` is open (else they wait in its mailbox). */
  cron: strict({ fallback: z.enum(["telegram", "discord"]).optional() }).prefault({}),
  log: strict({ level: z.enum(logLevels).default("info") }).prefault({}),
  /** Spending limits in USD, in the owner's time zone; unset means no limit. */
  budget: strict({
    daily: usd.optional(),
    monthly: usd.optional(),
    /** At 100 % the owner's own messages stop too (instead of running marked "over budget"). */
    hardStop: z.boolean().default(false),
    /** Shared scopes' own daily limit; default a fifth of `daily`. */
    shared: strict({ daily: usd.optional() }).prefault({}),
  }).prefault({}),
  /** Prices (USD per million tokens) by model id or id prefix, over the built-in table. */
  pricing: z
    .record(
      z.string().trim().min(1),
      strict({ input: pricePerMillion, output: pricePerMillion, cacheWrite5m: pricePerMillion.optional(), cacheWrite1h: pricePerMillion.optional(), cacheRead: pricePerMillion.optional() }),
    )
    .default({}),
  /** The model of compaction summaries and the memory flush; default the main model. */
  compaction: strict({ model: z.string().trim().min(1).optional() }).prefault({}),
  /** Photos, documents and voice notes (src/media/). */
  media: strict({
    /** Largest attachment downloaded, in bytes (Telegram's bot download limit). */
    maxBytes: positiveInt.default(20 * 1024 * 1024),
    /** User turns whose images and documents the model still sees; older ones become a one-line note. */
    keepTurns: positiveInt.default(3),
    /** Voice notes → text through an OpenAI-compatible `POST <baseUrl>/audio/transcriptions`; absent: voice notes are declined. */
    transcription: strict({
      baseUrl: httpUrl,
      /** Absent: HEARTH_TRANSCRIPTION_API_KEY (a local server may need none). */
      apiKey: secret.optional(),
      model: z.string().trim().min(1),
      language: z.string().trim().min(2).optional(),
      /** Show the owner a "🎤 heard: …" line before the answer. */
      showHeard: z.boolean().default(true),
      /** The service's price; absent: the known price of the model, or 0 for a local server (cost.ts transcriptionPricePerMinute). */
      pricing: strict({ perMinuteUsd: z.number().finite().min(0) }).optional(),
    }).optional(),
  }).prefault({}),
});

/** A validated config. `workspace` is an absolute path once it comes from parseConfig/loadConfig. */
export type Config = z.output<typeof configSchema>;
export type TelegramConfig = z.output<typeof telegramSchema>;
export type DiscordConfig = z.output<typeof discordSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;

// ── loading ────────────────────────────────────────────────────────────────────────────────

/** config.json is unreadable, not JSON, or fails validation. The CLI prints it and exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** The config file. */
  readonly path: string;
  /** One `✖ problem → at key.path` block per problem. */
  readonly issues: string;
  constructor(file: string, issues: string) {
    const text = redact(issues);
    super(`${file}: invalid configuration\n${text}\nFix the file and try again (a key that is left out takes its default).`);
    this.path = file;
    this.issues = text;
  }
}

export interface LoadConfigOptions {
  home: string;
  /** Where secrets and HEARTH_LOG come from; defaults to process.env. */
  env?: Env;
}

/** Reads `<home>/config.json` (a missing file means all defaults) and validates it. Throws ConfigError. */
export function loadConfig({ home, env = process.env }: LoadConfigOptions): Config {
  const file = homePaths(home).config;
  return parseConfig(readConfigFile(file), { home, env, file });
}

/**
 * Validates an already-parsed config value: applies env overrides (env wins), resolves the
 * workspace against `home`, registers secrets with the log redactor. Throws ConfigError.
 */
export function parseConfig(raw: unknown, opts: LoadConfigOptions & { file?: string }): Config {
  const env = opts.env ?? process.env;
  const file = opts.file ?? homePaths(opts.home).config;
  const { value, fromEnv } = applyEnv(raw, env);
  registerSecrets(value);
  for (const variable of [...PROVIDER_KEY_ENVS, TRANSCRIPTION_KEY_ENV]) {
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
  // The home holds the keys (config.json) and every chat's transcript: no tool that works inside
  // the workspace (send_file, markdown images, memory, a shared scope's read) may reach it.
  const home = path.resolve(opts.home);
  const fromWorkspace = path.relative(config.workspace, home);
  if (fromWorkspace === "" || (!fromWorkspace.startsWith("..") && !path.isAbsolute(fromWorkspace))) {
    throw new ConfigError(file, `✖ the workspace ${config.workspace} contains Hearth's home folder ${home}, which holds its keys and every chat's transcript; choose a folder inside the home (the default, "workspace") or beside it\n  → at workspace`);
  }
  return config;
}

function readConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return {};
    throw new ConfigError(file, `✖ cannot read the file (${code ?? (err as Error).message})`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (stripComments(text).trim() === "") return {};
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) throw new ConfigError(file, describeSyntaxErrors(text, errors));
  return value;
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
  { variable: "TELEGRAM_BOT_TOKEN", path: ["channels", "telegram", "token"] },
  { variable: "DISCORD_BOT_TOKEN", path: ["channels", "discord", "token"] },
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
 * The per-purpose models (`compaction.model`, `heartbeat.model`) by key path, where config has
 * them: they name models of any provider, like model.name.
 */
export function purposeModels(config: Config): Record<"compaction.model" | "heartbeat.model", string | undefined> {
  const c = config as { compaction?: { model?: unknown }; heartbeat?: { model?: unknown } };
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
  return { "compaction.model": str(c.compaction?.model), "heartbeat.model": str(c.heartbeat?.model) };
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
    if (p.apiKey) registerSecret(p.apiKey);
    // A gateway's credentials may come as a header ("Authorization: Bearer …", "x-api-key").
    for (const [header, value] of Object.entries(p.headers ?? {})) {
      if (/auth|key|token|secret/i.test(header)) {
        registerSecret(value);
        registerSecret(value.replace(/^(?:Bearer|Basic)\s+/i, ""));
      }
    }
  }
  return problems;
}

function registerSecrets(value: unknown): void {
  if (!isObject(value)) return;
  const at = (...keys: string[]): unknown =>
    keys.reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), value);
  const providers = at("providers");
  const providerKeys = isObject(providers) ? Object.values(providers).map((p) => (isObject(p) ? p.apiKey : undefined)) : [];
  for (const s of [at("model", "apiKey"), at("channels", "telegram", "token"), at("channels", "discord", "token"), at("tools", "web", "search", "apiKey"), ...providerKeys]) {
    if (typeof s === "string") {
      registerSecret(s);
      registerSecret(s.trim());
    }
  }
}

// ── helpers ────────────────────────────────────────────────────────────────────────────────

/** This machine's IANA time zone, the default for `timezone`. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

function isTimeZone(tz: string): boolean {
  if (tz === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const durationUnits: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration like "30m", "1h30m", "90s", "500ms" or "2d" into milliseconds. "0" is 0
 * (off). Returns null for anything else, including negative or fractional values.
 */
export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (s === "0") return 0;
  if (!/^(?:\d+(?:ms|s|m|h|d))+$/.test(s)) return null;
  let total = 0;
  for (const [, n, unit] of s.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * durationUnits[unit!]!;
  return Number.isSafeInteger(total) ? total : null;
}

function unknownKeysMessage(keys: string[], known: string[]): string {
  const parts = keys.map((key) => {
    const guess = closestKey(key, known);
    return guess ? `"${key}" (did you mean "${guess}"?)` : `"${key}"`;
  });
  const anyGuess = keys.some((key) => closestKey(key, known));
  const list = anyGuess ? "" : `; known keys here: ${known.join(", ")}`;
  return `Unknown key${keys.length > 1 ? "s" : ""} ${parts.join(", ")}${list}`;
}

/** The known key that `key` most likely misspells: same letters in another case, or ≤ 2 edits. */
function closestKey(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
