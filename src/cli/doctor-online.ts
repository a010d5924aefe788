// `hearth doctor --online`: one line per model provider: reachable, key accepted, model listed,
// tool calling works with a tiny request. The only doctor check that talks to the network,
// and only when asked: each provider costs at most two small requests.
import type { Config } from "../config/schema.ts";
import type { Check } from "./doctor-check.ts";
import { missingKeyOf, PROVIDER_PRESETS, splitModelName } from "../agent/providers/presets.ts";
import { displayUrl } from "../agent/model-errors.ts";
import { redact } from "../process/log.ts";

const TIMEOUT_MS = 15_000;
const PING_TOOL = { name: "ping", description: "Answers pong. Call it when asked to.", schema: { type: "object" as const, properties: {} } };
const PING_PROMPT = "Call the ping tool now.";

/** The model to try for each provider: the first that config uses, else the first listed. */
function modelsToCheck(config: Config): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const name of [config.model.name, ...config.model.fallbacks]) {
    const { provider, model } = splitModelName(name);
    if (!out.has(provider)) out.set(provider, model);
  }
  for (const [provider, p] of Object.entries(config.providers)) if (!out.has(provider)) out.set(provider, Object.keys(p.models)[0]);
  return out;
}

/**
 * `env`: where the Anthropic address came from (ANTHROPIC_BASE_URL or a config key), for the hints.
 * `secretsFile`: the home's .env, where a missing key goes.
 */
export async function checkProvidersOnline(config: Config, env: NodeJS.ProcessEnv = process.env, secretsFile = "the home's .env"): Promise<Check[]> {
  const checks: Check[] = [];
  for (const [provider, model] of modelsToCheck(config)) {
    const p = config.providers[provider];
    if (!p) continue;
    const missing = p.type === "openai" ? missingKeyOf(provider, p) : null;
    if (missing) {
      // Asking without the key would only earn a 401 (or teach a server a made-up key).
      const fix = missing.keyEnv ? `add ${missing.keyEnv}=… to ${secretsFile} (or export it)` : `set providers.${provider}.apiKeyEnv to a variable in ${secretsFile} that holds it`;
      checks.push({ name: `provider ${provider}`, ok: false, detail: `no key: ${missing.keyEnv ? `${missing.keyEnv} is not set` : "none configured"}`, fix });
      continue;
    }
    const toolsOff = model !== undefined && p.models[model]?.tools === false;
    checks.push(p.type === "anthropic" ? await checkAnthropic(provider, p, model, toolsOff, anthropicUrlSource(config, provider, env)) : await checkOpenAI(provider, p, model, toolsOff));
  }
  return checks;
}

/** The setting an Anthropic provider's address came from, as the owner would change it. */
function anthropicUrlSource(config: Config, provider: string, env: NodeJS.ProcessEnv): string {
  const raw = config.providers[provider]?.baseUrl;
  if (provider === "anthropic" && env.ANTHROPIC_BASE_URL?.trim() && raw === config.model.baseUrl) return "ANTHROPIC_BASE_URL";
  return provider === "anthropic" && raw === config.model.baseUrl ? "model.baseUrl" : `providers.${provider}.baseUrl`;
}

type Provider = Config["providers"][string];

interface Probe {
  /** Model ids the endpoint lists. */
  list(): Promise<string[]>;
  /** true: the reply called the tool; false: it answered without calling it. */
  callsTool(model: string): Promise<boolean>;
  baseUrl: string;
}

/**
 * What to do about an address that answers but not with a model list. Anthropic's SDK adds
 * /v1/… itself, so its address must not end with /v1 (that would make /v1/v1/messages); an
 * OpenAI-compatible address ends where /models is served, usually with /v1.
 */
function baseUrlFix(name: string, p: Provider, urlSource: string): string {
  if (p.type !== "anthropic") return `check providers.${name}.baseUrl: it should end where /models is served (often …/v1)`;
  if (/\/v1\/?$/.test(p.baseUrl ?? "")) return `${urlSource} ends with /v1, which Hearth adds itself (…/v1/messages): set it to the address without /v1`;
  return `check ${urlSource}: it is the address before /v1/messages (without /v1)`;
}

async function runProbe(name: string, p: Provider, probe: Probe, model: string | undefined, toolsOff: boolean, urlSource = `providers.${name}.baseUrl`): Promise<Check> {
  const check = `provider ${name}`;
  const where = displayUrl(probe.baseUrl);
  const keyEnv = p.apiKeyEnv ?? PROVIDER_PRESETS[name]?.keyEnv;
  const keyFix = `set a valid key in ${keyEnv ? `${keyEnv} or ` : ""}providers.${name}.apiKey${name === "anthropic" ? " (or model.apiKey)" : ""}`;
  let ids: string[];
  try {
    ids = await probe.list();
  } catch (err) {
    const status = statusOf(err);
    if (status === 401 || status === 403) return { name: check, ok: false, detail: `reachable at ${where}, but the key was refused (HTTP ${status})`, fix: keyFix };
    if (status !== undefined) return { name: check, ok: false, detail: `reachable at ${where}, but listing models failed (HTTP ${status})`, fix: baseUrlFix(name, p, urlSource) };
    return { name: check, ok: false, detail: `not reachable at ${where} (${reasonOf(err)})`, fix: PROVIDER_PRESETS[name]?.needsKey === false ? `start the ${name} server, or set providers.${name}.baseUrl to where it runs` : `check the network and ${urlSource}` };
  }
  const key = p.apiKey ? "key accepted" : "no key needed";
  if (!model) return { name: check, ok: true, detail: `reachable at ${where}, ${key}, ${ids.length} models listed (no model of it is configured)` };
  if (!ids.includes(model)) {
    return { name: check, ok: false, detail: `reachable at ${where}, ${key}, but model "${model}" is not listed (${ids.length} models are)`, fix: name === "ollama" ? `ollama pull ${model}` : `check the model name after "${name}/"` };
  }
  const head = `reachable at ${where}, ${key}, model ${model} listed`;
  if (toolsOff) return { name: check, ok: true, detail: `${head}, tools off in config` };
  try {
    if (await probe.callsTool(model)) return { name: check, ok: true, detail: `${head}, tool calling works` };
    return { name: check, ok: true, detail: `${head}, but it answered a tiny tool request without calling the tool`, fix: "a small model may use tools poorly; try a larger one if tool use fails" };
  } catch (err) {
    const status = statusOf(err);
    return { name: check, ok: true, detail: `${head}, but tool calling failed${status ? ` (HTTP ${status})` : ""}: ${reasonOf(err)}`, fix: `Hearth runs it without tools; say so with "tools": false under providers.${name}.models.${model}, or pick a model that supports tools` };
  }
}

async function checkOpenAI(name: string, p: Provider, model: string | undefined, toolsOff: boolean): Promise<Check> {
  const { ChatApi } = await import("../agent/providers/openai/chat-api.ts");
  const client = new ChatApi({ apiKey: p.apiKey, baseURL: p.baseUrl!, headers: p.headers });
  return runProbe(name, p, {
    baseUrl: client.baseURL,
    list: () => client.listModels(AbortSignal.timeout(TIMEOUT_MS)),
    callsTool: async (m) => {
      const r = await client.createChat(
        {
          model: m,
          max_tokens: 64,
          messages: [{ role: "user", content: PING_PROMPT }],
          tools: [{ type: "function", function: { name: PING_TOOL.name, description: PING_TOOL.description, parameters: PING_TOOL.schema } }],
        },
        AbortSignal.timeout(TIMEOUT_MS),
      );
      return (r.choices[0]?.message.tool_calls?.length ?? 0) > 0;
    },
  }, model, toolsOff);
}

async function checkAnthropic(name: string, p: Provider, model: string | undefined, toolsOff: boolean, urlSource: string): Promise<Check> {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const client = new Anthropic({ apiKey: p.apiKey ?? "hearth-no-key", maxRetries: 0, timeout: TIMEOUT_MS, ...(p.baseUrl ? { baseURL: p.baseUrl } : {}), ...(p.headers ? { defaultHeaders: p.headers } : {}) });
  return runProbe(name, p, {
    baseUrl: client.baseURL,
    list: async () => (await client.models.list({ limit: 1000 })).data.map((m) => m.id),
    callsTool: async (m) => {
      const r = await client.messages.create({
        model: m,
        max_tokens: 64,
        messages: [{ role: "user", content: PING_PROMPT }],
        tools: [{ name: PING_TOOL.name, description: PING_TOOL.description, input_schema: PING_TOOL.schema }],
      });
      return r.content.some((b) => b.type === "tool_use");
    },
  }, model, toolsOff, urlSource);
}

const statusOf = (err: unknown): number | undefined => {
  const s = (err as { status?: unknown })?.status;
  return typeof s === "number" ? s : undefined;
};

/** The innermost cause, without the SDK's wording around it ("Connection error."). */
function reasonOf(err: unknown): string {
  const body = (err as { error?: { message?: unknown; error?: { message?: unknown } } })?.error;
  const apiMessage = body?.message ?? body?.error?.message; // OpenAI's and Anthropic's error bodies
  if (typeof apiMessage === "string") return redact(apiMessage);
  let e: unknown = err;
  let reason = err instanceof Error ? err.message : String(err);
  for (let depth = 0; e instanceof Error && depth < 5; depth++, e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    reason = code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
  }
  return redact(reason).replace(/\/\/[^/\s@]+@/g, "//");
}
