// An OpenAI-compatible Chat Completions endpoint as a model target: one streamed attempt over
// Hearth's own client (chat-api.ts). Retries, backoff, stalls and fallbacks are the shared policy's.
import type { AssistantBlock, AssistantStop, Usage } from "../../messages.ts";
import { classifyModelError, type SdkErrors } from "../../model-errors.ts";
import { AttemptWatch, type AttemptResult, type ShownText } from "../attempt.ts";
import type { ModelCapabilities } from "../model.ts";
import type { ModelTarget } from "../policy.ts";
import { ChatApi, chatApiErrors, type ChatParams, type ChatUsage } from "./chat-api.ts";
import { toChatParams } from "./request.ts";

export interface OpenAIConnection {
  apiKey?: string | undefined;
  baseURL: string;
  headers?: Record<string, string> | undefined;
}

type Loaded = { client: ChatApi; sdk: SdkErrors };

/** The client for one endpoint, made with its first request. */
export function openaiConnection(c: OpenAIConnection): () => Promise<Loaded> {
  let loaded: Loaded | null = null;
  return async () => (loaded ??= { sdk: chatApiErrors, client: new ChatApi({ apiKey: c.apiKey, baseURL: c.baseURL, headers: c.headers }) });
}

export interface OpenAITargetOptions {
  /** How config names it ("ollama/llama3.2"). */
  name: string;
  /** The API's model id ("llama3.2"). */
  model: string;
  capabilities: ModelCapabilities;
  /** Where this provider's key is set, for a 401/403 message. */
  keyHint: string;
}

export function openaiTarget(connect: () => Promise<Loaded>, opts: OpenAITargetOptions): ModelTarget {
  return {
    name: opts.name,
    capabilities: opts.capabilities,
    async attempt(req, { signal, idleTimeoutMs, shown }) {
      const { client, sdk } = await connect();
      // OpenAI's own API refuses max_tokens for its reasoning models; compatible servers know only max_tokens.
      const maxTokensField = new URL(client.baseURL).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens";
      const params = toChatParams(req, opts.model, { vision: opts.capabilities.vision, maxTokensField });
      return streamAttempt(client, sdk, params, opts, idleTimeoutMs, signal, shown);
    },
  };
}

interface CallDraft {
  id: string;
  name: string;
  args: string;
}

async function streamAttempt(
  client: ChatApi,
  sdk: SdkErrors,
  params: ChatParams,
  opts: OpenAITargetOptions,
  idleTimeoutMs: number,
  signal: AbortSignal,
  shown: ShownText,
): Promise<AttemptResult> {
  const { model } = opts;
  const watch = new AttemptWatch(signal, idleTimeoutMs);
  shown.startAttempt();
  let text = "";
  const calls: CallDraft[] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  let answeredBy = model;
  let finish: string | null = null;
  try {
    for await (const chunk of client.streamChat(params, watch.signal)) {
      watch.touch();
      if (chunk.model) answeredBy = chunk.model;
      if (chunk.usage) readUsage(usage, chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) continue; // the usage chunk has no choices
      const delta = choice.delta;
      if (delta?.content) {
        text += delta.content;
        shown.add(delta.content);
      }
      for (const tc of delta?.tool_calls ?? []) {
        // Arguments arrive in pieces; `index` says which call each piece belongs to.
        const draft = (calls[callIndex(calls, tc)] ??= { id: "", name: "", args: "" });
        if (tc.id) draft.id = tc.id;
        if (tc.function?.name) draft.name += tc.function.name;
        if (tc.function?.arguments) draft.args += tc.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  } catch (err) {
    if (!watch.cancelled) return { type: "error", error: classifyModelError(err, model, sdk, client.baseURL, opts.keyHint) };
  } finally {
    watch.release();
  }
  const ended = watch.outcome(model, finish !== null, client.baseURL);
  if (ended) return ended;
  shown.finishAttempt();
  const content: AssistantBlock[] = [];
  if (text) content.push({ type: "text", text });
  for (const [i, c] of calls.entries()) {
    if (!c) continue;
    content.push({ type: "tool_call", id: c.id || `call_${i}_${Date.now().toString(36)}`, name: c.name, input: parseArgs(c.args) });
  }
  const hasCalls = content.some((b) => b.type === "tool_call");
  return { type: "ok", message: { role: "assistant", content, stop: toStop(finish, hasCalls), model: answeredBy, usage, ts: Date.now() } };
}

/** `index` says which call a piece belongs to; servers that omit it (older Ollama) send each call whole, with its id. */
function callIndex(calls: CallDraft[], tc: { index?: number; id?: string }): number {
  if (typeof tc.index === "number") return tc.index;
  if (tc.id) {
    const known = calls.findIndex((c) => c?.id === tc.id);
    return known === -1 ? calls.length : known;
  }
  return Math.max(0, calls.length - 1);
}

/** The usage chunk (`stream_options.include_usage`): cached prompt tokens are counted apart, as Anthropic's are. */
function readUsage(usage: Usage, u: ChatUsage): void {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  usage.inputTokens = Math.max(0, (u.prompt_tokens ?? 0) - cached);
  usage.cacheReadTokens = cached;
  usage.outputTokens = u.completion_tokens ?? 0;
}

function parseArgs(args: string): unknown {
  if (!args.trim()) return {};
  try {
    return JSON.parse(args);
  } catch {
    // Cut off by max_tokens: validation reports it to the model as invalid input.
    return { _unparsed: args };
  }
}

function toStop(reason: string | null, hasCalls: boolean): AssistantStop {
  // Some servers (Ollama) end a tool-calling turn with "stop".
  if (hasCalls && reason !== "length") return "tool_use";
  switch (reason) {
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}
