// The schema of config.json, one section at a time; every key has a default. Built from the
// field schemas in fields.ts; read through loadConfig/parseConfig (config.ts), never directly.
import { z } from "zod";
import { MAX_TURNS_CAP } from "../agent/turn-limit.ts";
import { PROVIDER_PRESETS, providerTypes } from "../agent/providers/presets.ts";
import { sandboxModes } from "../agent/tools/sandbox.ts";
import { askModes } from "../egress/policy.ts";
import { mcpSchema } from "../agent/mcp/config.ts";
import { execHostsSchema } from "../agent/tools/hosts/config.ts";
import { channelsSchema, CONFIGURABLE_IDS } from "../channels/registry.ts";
import { CONFIG_VERSION } from "./config-version.ts";
import { secretMap, toVariable, type SecretMove } from "../fields/secret-fields.ts";
import { clockTime, duration, envName, speechFormats, voiceReplyModes, httpUrl, logLevels, positiveInt, parseDuration, pricePerMillion, queueModes, secret, strict, systemTimeZone, timeZone, usd } from "../fields/config-fields.ts";

// ── the schema ─────────────────────────────────────────────────────────────────────────────

/** A key whose section names its variable in `apiKeyEnv` (embeddings, speech): moved there under `variable`, unless it names one already. */
const toSiblingVariable = (variable: string): SecretMove => ({
  variable: (_names, holder) => (typeof holder.apiKeyEnv === "string" ? holder.apiKeyEnv : variable),
  leaves: (_names, holder) => (typeof holder.apiKeyEnv === "string" ? { kind: "nothing" } : { kind: "sibling", key: "apiKeyEnv" }),
});

/**
 * `providers.<name>.apiKey`: a provider that names its own variable keeps it; otherwise its
 * preset's (Anthropic's is ANTHROPIC_API_KEY), else one made from its name, which `apiKeyEnv`
 * then names (Hearth would not look there otherwise).
 */
const providerKeyMove: SecretMove = {
  variable: ([name = ""], holder) =>
    typeof holder.apiKeyEnv === "string" ? holder.apiKeyEnv : name === "anthropic" ? "ANTHROPIC_API_KEY" : (PROVIDER_PRESETS[name]?.keyEnv ?? `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`),
  leaves: ([name = ""], holder) => (typeof holder.apiKeyEnv === "string" || name === "anthropic" || PROVIDER_PRESETS[name]?.keyEnv ? { kind: "nothing" } : { kind: "sibling", key: "apiKeyEnv" }),
};

const modelSchema = strict({
  name: z.string().trim().min(1).default("claude-sonnet-5-5").describe("The model that answers: \"<provider>/<model>\" (\"ollama/llama3.2\") or a bare Anthropic name."),
  fallbacks: z.array(z.string().trim().min(1)).default([]).describe("Models (of any provider) tried in order when the first keeps failing."),
  maxTokens: positiveInt.default(8192).describe("Longest answer per model call (a model's own maxTokens under providers wins)."),
  contextWindow: positiveInt.default(200_000).describe("The model's window; older turns are summarised before it fills (a model's own contextWindow wins)."),
  idleTimeoutMs: positiveInt.min(1000, "must be at least 1000 (one second)").max(600_000, "must be at most 600000 (ten minutes)").default(60_000).describe("A model stream with no data for this long has stalled: retried once, then the user is told."),
  apiKey: secret(toVariable("ANTHROPIC_API_KEY")).optional(),
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
  pricing: strict({ input: z.number().nonnegative(), output: z.number().nonnegative() }).optional().describe("USD per million tokens, for the cost estimate."),
  vision: z.boolean().optional().describe("Whether it takes images (default: Anthropic yes, others no)."),
  tools: z.boolean().default(true).describe("false: it cannot call tools, so it runs without them."),
});

/** `providers.<name>`: `type` and `baseUrl` may be left out for a preset name (openai, ollama, …). */
const providerSchema = strict({
  type: z.enum(providerTypes).optional(),
  baseUrl: httpUrl.optional(),
  apiKey: secret(providerKeyMove).optional(),
  apiKeyEnv: envName.optional().describe("The environment variable that holds the key (instead of apiKey)."),
  headers: z.record(z.string(), z.string()).meta(secretMap()).optional(),
  models: z.record(z.string().min(1), modelSpecSchema).default({}),
});

const providerName = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "a provider name is lowercase letters, digits, - and _ (it is the part before the / in model names)");

const agentSchema = strict({
  maxTurns: positiveInt.max(MAX_TURNS_CAP, `must be at most ${MAX_TURNS_CAP} (the hard cap on turns per run)`).default(25).describe("Model calls per answer before Hearth stops and tells you (at most 100)."),
  maxConcurrentRuns: positiveInt.default(4).describe("Answers in progress at once, across all chats."),
  queueMode: z.enum(queueModes).default("steer").describe("What a message does while an answer runs: steer, followup, collect, interrupt."),
  shutdownGraceMs: z.int().min(0).default(10_000).describe("On shutdown, how long running answers may finish."),
  releaseIdleAfter: duration.default("30m").describe("A session's in-memory state (transcript view, budget, context) is released after this idle time…"),
  maxSessionsInMemory: positiveInt.default(500).describe("…or when more sessions than this hold state (the least recently used go first)."),
});

const domainList = z.array(z.string().trim().min(1)).default([]);
/** A host (name, `*.` wildcard or address) with an optional `:port`, as the egress policy compares it. */
const hostPattern = z.string().trim().min(1).regex(/^(\*\.)?[A-Za-z0-9_.-]+(:\d{1,5})?$|^\[?[0-9A-Fa-f:.]+\]?(:\d{1,5})?$/, "a host name, *.domain or address, with an optional :port");
const noBothDomainLists = (w: { allowedDomains: string[]; blockedDomains: string[] }, ctx: z.core.$RefinementCtx) => {
  if (w.allowedDomains.length > 0 && w.blockedDomains.length > 0) ctx.addIssue({ code: "custom", path: ["blockedDomains"], message: "cannot be used together with allowedDomains (pick one)" });
};

/** Web search and fetch (src/agent/tools/web/): the provider's server tools, or Hearth's own ("local"). */
const webSchema = strict({
  search: strict({
    enabled: z.boolean().default(true),
    mode: z.enum(["server", "local"]).default("server"),
    provider: z.enum(["brave", "searxng"]).default("brave").describe("Local mode: the search API. Brave needs a key (BRAVE_API_KEY); SearXNG needs `baseUrl`."),
    baseUrl: httpUrl.optional(),
    apiKey: secret(toVariable("BRAVE_API_KEY")).optional(),
    maxUses: positiveInt.max(50).default(5),
    allowedDomains: domainList,
    blockedDomains: domainList,
    pricing: strict({ perThousandUsd: z.number().nonnegative() }).optional().describe("Local mode: what a search costs, for usage and budgets (default: Brave's list price, SearXNG free)."),
  }).superRefine(noBothDomainLists).prefault({}),
  fetch: strict({
    enabled: z.boolean().default(true),
    mode: z.enum(["server", "local"]).default("server"),
    maxUses: positiveInt.max(50).default(10),
    allowedDomains: domainList,
    blockedDomains: domainList,
    allowPrivate: z.array(z.string().trim().min(1)).default([]).describe("Deprecated alias of egress.allowPrivate, read for one version (the config migration moves it)."),
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
  version: z.literal(CONFIG_VERSION).default(CONFIG_VERSION).describe("The file's configuration version; loadConfig brings older files to this one first (config/migrations.ts)."),
  workspace: z.string().trim().min(1).default("workspace").describe("The folder with your markdown files; a relative path is inside the home. It may not contain the home (which holds the keys and every chat's transcript)."),
  timezone: timeZone.default(systemTimeZone).describe("IANA zone for daily logs, schedules and active hours; default: the system's."),
  model: modelSchema.prefault({}).describe("The model that answers, and its limits."),
  providers: z.record(providerName, providerSchema).default({}).describe("Model providers besides Anthropic; presets (openai, openrouter, groq, ollama, lmstudio, vllm) need no entry."),
  agent: agentSchema.prefault({}).describe("How answers run: turns, concurrency, what a message does while one runs."),
  tools: strict({
    exec: strict({
      timeoutMs: positiveInt.default(120_000),
      sandbox: z.enum(sandboxModes).default("auto").describe("auto: bubblewrap when it works, else unsandboxed; bwrap: refuse to start without it."),
      network: z.boolean().default(true).describe("Whether sandboxed commands may use the network."),
      hosts: execHostsSchema.describe("Other machines `exec` may run on over SSH (main scope only); see agent/tools/hosts/config.ts."),
    }).prefault({}),
    shared: strict({ allow: z.array(z.string().trim().min(1)).default([]) }).prefault({}).describe("Extra tool names allowed in the shared scope (groups, non-owner DMs)."),
    web: webSchema.prefault({}),
  }).prefault({}),
  mcp: mcpSchema.describe("MCP servers whose tools the agent gets (src/agent/mcp/config.ts)."),
  channels: channelsSchema.describe("An absent channel is not configured."),
  heartbeat: strict({
    every: duration.default("30m"),
    activeHours: strict({ start: clockTime.default("08:00"), end: clockTime.default("22:00") }).prefault({}),
    model: z.string().trim().min(1).optional().describe("The heartbeat's model; absent: see heartbeatModel()."),
    maxTokens: positiveInt.default(1024),
    pauseAfterIdle: duration.default("7d").describe("No heartbeat after this long without a message from the owner (\"0\": never pause)."),
    tools: z.array(z.string().trim().min(1)).default([]).describe("Tools the heartbeat may use (names, e.g. \"memory_search\"); none by default, each costs tokens on every tick."),
  }).prefault({}),
  approvals: strict({
    exec: z.enum(["risky", "always", "off"]).default("risky"),
    timeoutSeconds: positiveInt.max(86_400).default(300),
    grantMinutes: positiveInt.max(7 * 24 * 60).default(30),
    ask: z.array(z.string().trim().min(1)).default([]),
    allow: z.array(z.string().trim().min(1)).default([]),
  }).prefault({}).describe("Asking the owner before a tool acts (src/approvals/): `exec` risky (the built-in list, plus what the run may not do once outside content entered it), always or off; `ask` / `allow` are command patterns (`*` matches within one command) that add to or exempt from the list."),
  egress: strict({
    /** Always allowed, without a question. */
    allow: z.array(hostPattern).default([]),
    /** Always refused. */
    deny: z.array(hostPattern).default([]),
    /** Hosts (names or addresses) that may be reached although they resolve to a loopback, private or link-local address. */
    allowPrivate: z.array(hostPattern).default([]),
    /** tainted: a run that read outside content asks for each host without a grant; always: every such host asks; never: none asks. */
    ask: z.enum(askModes).default("tainted"),
    /** The owner's own services: what they answer a command does not taint its run (every other answer does). The SSH exec hosts count as own. */
    own: z.array(hostPattern).default([]),
  }).prefault({}).describe("Every connection made on the model's behalf (a sandboxed command through Hearth's proxy, local web_fetch, stdio MCP servers): src/egress/policy.ts. Host patterns: `example.com`, `*.example.com` (names under it), an address; an optional `:port`."),
  cron: strict({ fallback: z.enum(CONFIGURABLE_IDS).optional() }).prefault({}).describe("Scheduled work: `fallback` takes answers meant for the terminal while no `hearth chat` is open (else they wait in its mailbox)."),
  tasks: strict({
    maxConcurrent: positiveInt.default(3),
    /** A task running longer than this is stopped and reported as over its time cap. */
    maxMinutes: z.number().positive().default(30),
    /** A task's paid calls never cost more than this together: the call that could pass it is not made (each is reserved at its worst case). */
    maxCostUsd: usd.default(1),
    /** The tasks' model; absent: the model that spawn_task names, else model.name. */
    model: z.string().trim().min(1).optional(),
    /** 1: only conversations start tasks; 2: a task may start one more level of tasks, and so on. */
    maxDepth: positiveInt.max(3).default(1),
  }).prefault({}).describe("Background tasks (spawn_task): how many run at once, each one's caps, their model, how deep they nest."),
  log: strict({ level: z.enum(logLevels).default("info") }).prefault({}).describe("The daemon log: its level (HEARTH_LOG wins)."),
  budget: strict({
    daily: usd.optional(),
    monthly: usd.optional(),
    /** At 100 % the owner's own messages stop too (instead of running marked "over budget"). */
    hardStop: z.boolean().default(false),
    /** Shared scopes' own daily limit; default a fifth of `daily`. */
    shared: strict({ daily: usd.optional() }).prefault({}),
  }).prefault({}).describe("Spending limits in USD, in the owner's time zone; unset means no limit."),
  /** Prices (USD per million tokens) by model id or id prefix, over the built-in table. */
  pricing: z
    .record(
      z.string().trim().min(1),
      strict({ input: pricePerMillion, output: pricePerMillion, cacheWrite5m: pricePerMillion.optional(), cacheWrite1h: pricePerMillion.optional(), cacheRead: pricePerMillion.optional() }),
    )
    .default({}),
  memory: strict({
    /** An OpenAI-compatible `POST <baseUrl>/embeddings`; absent: keyword search alone. */
    embeddings: strict({
      baseUrl: httpUrl,
      model: z.string().trim().min(1),
      apiKey: secret(toSiblingVariable("HEARTH_EMBEDDINGS_API_KEY")).optional(),
      /** The variable that holds the key (instead of apiKey); a local server (Ollama) needs none. */
      apiKeyEnv: envName.optional(),
      /** Shorter vectors, for models that offer them (text-embedding-3-*). */
      dimensions: positiveInt.optional(),
      /** The service's price; absent: the known price of the model, or 0 for a local server. */
      pricing: strict({ perMillionTokensUsd: z.number().finite().min(0) }).optional(),
    }).optional(),
  }).prefault({}).describe("Memory search: optional embeddings for hybrid recall (src/memory/search/hybrid.ts)."),
  compaction: strict({ model: z.string().trim().min(1).optional() }).prefault({}).describe("The model of compaction summaries and the memory flush; default the main model."),
  backup: strict({
    every: duration.refine((s) => (parseDuration(s) ?? 0) >= 60_000, "must be at least a minute, such as \"1d\" or \"12h\"").default("1d"),
    keep: positiveInt.default(7),
    dir: z.string().trim().min(1).default("backups"),
  }).optional().describe("Scheduled backups of the home (src/backup/); absent: none. `dir` is relative to the home unless absolute."),
  media: strict({
    /** Largest attachment downloaded, in bytes (Telegram's bot download limit). */
    maxBytes: positiveInt.default(20 * 1024 * 1024),
    /** User turns whose images and documents the model still sees; older ones become a one-line note. */
    keepTurns: positiveInt.default(3),
    /** Voice notes → text through an OpenAI-compatible `POST <baseUrl>/audio/transcriptions`; absent: voice notes are declined. */
    transcription: strict({
      baseUrl: httpUrl,
      /** Absent: HEARTH_TRANSCRIPTION_API_KEY (a local server may need none). */
      apiKey: secret(toVariable("HEARTH_TRANSCRIPTION_API_KEY")).optional(),
      model: z.string().trim().min(1),
      language: z.string().trim().min(2).optional(),
      /** Show the owner a "🎤 heard: …" line before the answer. */
      showHeard: z.boolean().default(true),
      /** The service's price; absent: the known price of the model, or 0 for a local server (spending/pricing.ts transcriptionPricePerMinute). */
      pricing: strict({ perMinuteUsd: z.number().finite().min(0) }).optional(),
    }).optional(),
  }).prefault({}).describe("Photos, documents and voice notes (src/media/)."),
  dashboard: strict({
    enabled: z.boolean().default(false),
    host: z.string().trim().min(1).default("127.0.0.1"),
    /** 0: any free port (`hearth status` says which). */
    port: z.int().min(0).max(65_535).default(7420),
    /** Needed to bind anything but loopback (a warning is logged on start). */
    allowRemote: z.boolean().default(false),
  }).superRefine((d, ctx) => {
    if (!isLoopbackHost(d.host) && !d.allowRemote) ctx.addIssue({ code: "custom", path: ["host"], message: `"${d.host}" is not a loopback address; set dashboard.allowRemote to true to serve the dashboard beyond this machine` });
  }).prefault({}).describe("The web dashboard (src/dashboard/), served by the daemon; off unless enabled."),
  voice: strict({
    /** Text → speech through an OpenAI-compatible `POST <baseUrl>/audio/speech`; absent: Hearth answers in text only. */
    tts: strict({
      baseUrl: httpUrl,
      apiKey: secret(toSiblingVariable("HEARTH_TTS_API_KEY")).optional(),
      /** The variable that holds the key (instead of apiKey); a local server may need neither. */
      apiKeyEnv: envName.optional(),
      model: z.string().trim().min(1).default("gpt-4o-mini-tts"),
      voice: z.string().trim().min(1).default("alloy"),
      /** `opus`: OGG/Opus, what Telegram plays as a voice message. */
      format: z.enum(speechFormats).default("opus"),
      /** The service's price; absent: the known price of the model, or 0 for a local server (spending/pricing.ts speechPricePerMillionChars). */
      pricing: strict({ perMillionCharsUsd: z.number().finite().min(0) }).optional(),
    }).optional(),
    /** `auto`: a voice note is answered with a voice note too; `always`; `never`. `/voice on|off` overrides it per chat. */
    reply: z.enum(voiceReplyModes).default("auto"),
  }).prefault({}).describe("Spoken replies (src/media/speech.ts, gateway/delivery/spoken-reply.ts)."),
});

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A validated config. `workspace` is an absolute path once it comes from parseConfig/loadConfig. */
export type Config = z.output<typeof configSchema>;
export type { TelegramConfig } from "../channels/telegram/descriptor.ts";
export type { DiscordConfig } from "../channels/discord/descriptor.ts";
export type ProviderConfig = z.output<typeof providerSchema>;
