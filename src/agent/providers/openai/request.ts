// The one boundary between Hearth's messages and the OpenAI Chat Completions API (OpenAI,
// OpenRouter, Groq, Ollama, LM Studio, vLLM, llama.cpp's server).
import type { AssistantMessage, ToolCallBlock, UserMessage } from "../../messages.ts";
import { mediaParts, type MediaPart } from "../../media-view.ts";
import { MISSING_RESULT, type ModelRequest } from "../model.ts";
import type { ChatAssistantMessage, ChatContentPart, ChatImagePart, ChatMessage, ChatParams, ChatToolCall } from "./chat-api.ts";


const INTERRUPTED = "[interrupted]";

export interface ChatOptions {
  /** The model takes images as `image_url` parts; otherwise an image becomes a placeholder. */
  vision: boolean;
}

/**
 * Converts Hearth's messages into Chat Completions messages, and repairs what the API would
 * reject, as the Anthropic conversion does: every tool call gets a `tool` message right after
 * its assistant message (a synthetic error when it never finished), results without a call are
 * dropped, user text that arrived between tool results (steering) follows the results, and
 * assistant neighbours are merged. A request without tools (a summary, a model that cannot
 * call tools) carries earlier tool calls and results as plain text, which every server accepts.
 */
export function toChatMessages(req: ModelRequest, opts: ChatOptions): ChatMessage[] {
  const withTools = req.tools.length > 0;
  const out: ChatMessage[] = [];
  const system = req.system.map((b) => b.text).join("\n\n");
  if (system) out.push({ role: "system", content: system });
  let open: ToolCallBlock[] = []; // calls of the last assistant message still awaiting a result
  let results: ChatMessage[] = []; // `tool` messages
  let flatResults: string[] = []; // results as text, when the request has no tools
  let texts: UserPart[] = [];
  const media = mediaParts(req.messages, req.mediaKeepTurns);

  const answer = (call: ToolCallBlock, content: string, isError: boolean) => {
    const text = content.length > 0 ? content : "(no output)";
    if (withTools) results.push(toolMessage(call.id, text, isError));
    else flatResults.push(`[result of ${call.name}${isError ? " (error)" : ""}: ${text}]`);
  };
  const flushUser = () => {
    for (const call of open) answer(call, MISSING_RESULT, true);
    open = [];
    out.push(...results);
    const user = [...flatResults, ...texts];
    if (user.length > 0) out.push({ role: "user", content: user.every((p) => typeof p === "string") ? user.join("\n\n") : user.map(toChatPart) });
    results = [];
    flatResults = [];
    texts = [];
  };

  for (const [index, m] of req.messages.entries()) {
    switch (m.role) {
      case "user": {
        const content = userContent(m, opts);
        if (content.length > 0) texts.push(content);
        for (const part of media.get(index) ?? []) texts.push(mediaPart(part, opts));
        break;
      }
      case "tool_result": {
        const i = open.findIndex((c) => c.id === m.toolCallId);
        if (i === -1) break; // its call is not in view (cut by compaction): the API would reject it
        const [call] = open.splice(i, 1);
        answer(call!, m.content, m.isError);
        break;
      }
      case "assistant": {
        const next = assistantMessage(m, withTools);
        if (!next) break;
        flushUser();
        const prev = out.at(-1);
        if (prev?.role === "assistant") mergeAssistant(prev, next);
        else out.push(next);
        open = m.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
        break;
      }
      default:
        m satisfies never;
    }
  }
  flushUser();
  return out;
}

function userContent(m: UserMessage, _opts: ChatOptions): string {
  return m.text;
}

type UserPart = string | ChatImagePart;

/** An attachment: an image as an `image_url` part when the model has vision, else a line of text. */
function mediaPart(part: MediaPart, opts: ChatOptions): UserPart {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
      return opts.vision ? { type: "image_url", image_url: { url: `data:${part.mediaType};base64,${part.data}` } } : "[image omitted: this model cannot see images]";
    case "document":
      return "[PDF omitted: this model cannot read PDF documents; its stored path is named above]";
    default:
      return part satisfies never;
  }
}

const toChatPart = (p: UserPart): ChatContentPart => (typeof p === "string" ? { type: "text", text: p } : p);

function assistantMessage(m: AssistantMessage, withTools: boolean): ChatAssistantMessage | null {
  const texts: string[] = [];
  const calls: ChatToolCall[] = [];
  for (const b of m.content) {
    switch (b.type) {
      case "text":
        if (b.text.trim().length > 0) texts.push(b.text);
        break;
      case "tool_call": {
        const args = JSON.stringify(b.input ?? {});
        if (withTools) calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: args } });
        else texts.push(`[called tool ${b.name} with ${args}]`);
        break;
      }
      case "thinking":
        break; // Anthropic's signed thinking means nothing to another provider
      case "server":
        break; // Anthropic's server tool blocks (web search, fetch) mean nothing to another provider
      default:
        b satisfies never;
    }
  }
  if (m.stop === "aborted" && texts.length > 0) texts.push(INTERRUPTED);
  if (texts.length === 0 && calls.length === 0) return null;
  return {
    role: "assistant",
    content: texts.length > 0 ? texts.join("\n\n") : null,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

function mergeAssistant(prev: ChatAssistantMessage, next: ChatAssistantMessage): void {
  const texts = [prev.content, next.content].filter((c): c is string => typeof c === "string" && c.length > 0);
  prev.content = texts.length > 0 ? texts.join("\n\n") : null;
  const calls = [...(prev.tool_calls ?? []), ...(next.tool_calls ?? [])];
  if (calls.length > 0) prev.tool_calls = calls;
}

/** Chat Completions has no error flag on a tool result: the model reads it in the text. */
const toolMessage = (id: string, text: string, isError: boolean): ChatMessage => ({ role: "tool", tool_call_id: id, content: isError ? `Error: ${text}` : text });

/** The full streaming request body for one model. */
export function toChatParams(req: ModelRequest, model: string, opts: ChatOptions & { maxTokensField: "max_tokens" | "max_completion_tokens" }): ChatParams {
  return {
    model,
    messages: toChatMessages(req, opts),
    [opts.maxTokensField]: req.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    ...(req.tools.length > 0
      ? { tools: req.tools.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.input_schema } })) }
      : {}),
  };
}
