// The one boundary between Hearth's messages and the Anthropic Messages API.
import type Anthropic from "@anthropic-ai/sdk";
import type { ImageBlock, Message, ToolCallBlock } from "../../messages.ts";
import { mediaView, type MediaPart } from "../../media-view.ts";
import { MISSING_RESULT, type ModelRequest } from "../model.ts";

type ApiMessage = Anthropic.MessageParam;
type ApiUserBlock = Anthropic.TextBlockParam | Anthropic.ToolResultBlockParam | Anthropic.ImageBlockParam | Anthropic.DocumentBlockParam;
type ApiAssistantBlock = Anthropic.TextBlockParam | Anthropic.ToolUseBlockParam | Anthropic.ThinkingBlockParam | Anthropic.ContentBlockParam;

const INTERRUPTED = "[interrupted]";
const CACHE = { type: "ephemeral" } as const;
/** The Messages API rejects a request with more cache_control breakpoints than this. */
const MAX_BREAKPOINTS = 4;

/**
 * Converts Hearth's messages into API messages. It also repairs what the API would reject:
 * tool calls without a result (a crash or abort) get a synthetic error result, results
 * without a call are dropped, empty text is skipped, and assistant neighbours are merged.
 * The last block of the last message carries a cache breakpoint, and so does the block before
 * the first attachment still shown: when those attachments become notes (media-view.ts), the
 * request reads the cache up to there and writes only the notes and what follows them. The
 * first request after such a step marks that same block again, so the read is exact however
 * many blocks lie between. `breakpoints`: how many the messages may use (the API allows 4 per
 * request, the system prompt's included); the last message's comes first.
 */
export function toApiMessages(messages: Message[], opts: { cacheLast?: boolean; mediaKeepTurns?: number; breakpoints?: number } = {}): ApiMessage[] {
  const out: ApiMessage[] = [];
  const { parts: media, firstShown, firstRetired } = mediaView(messages, opts.mediaKeepTurns);
  let step: ApiBlock | undefined; // the block before the first attachment still shown
  let stepped: ApiBlock | undefined; // the block before the first attachment the last step made a note
  let open: ToolCallBlock[] = []; // calls of the last assistant message still awaiting a result
  let results: ApiUserBlock[] = [];
  let texts: ApiUserBlock[] = [];

  const flushUser = () => {
    for (const call of open) results.push(toolResult(call.id, MISSING_RESULT, true));
    open = [];
    const content = [...results, ...texts];
    results = [];
    texts = [];
    if (content.length > 0) out.push({ role: "user", content });
  };

  for (const [index, m] of messages.entries()) {
    switch (m.role) {
      case "user":
        if (m.text.length > 0) texts.push({ type: "text", text: m.text });
        if (index === firstShown) step = texts.at(-1) ?? results.at(-1) ?? lastBlock(out);
        if (index === firstRetired) stepped = texts.at(-1) ?? results.at(-1) ?? lastBlock(out);
        for (const part of media.get(index) ?? []) texts.push(toApiPart(part));
        break;
      case "tool_result": {
        const i = open.findIndex((c) => c.id === m.toolCallId);
        if (i === -1) break; // its call is not in view (cut by compaction): the API would reject it
        open.splice(i, 1);
        results.push(toolResult(m.toolCallId, m.content, m.isError, m.images));
        break;
      }
      case "assistant": {
        const content = assistantBlocks(m);
        if (content.length === 0) break;
        flushUser();
        if (out.length === 0) out.push({ role: "user", content: [{ type: "text", text: "(conversation continues)" }] });
        const prev = out.at(-1);
        if (prev?.role === "assistant") (prev.content as ApiAssistantBlock[]).push(...content);
        else out.push({ role: "assistant", content });
        open = content.filter((b): b is Anthropic.ToolUseBlockParam => b.type === "tool_use").map(toCall);
        break;
      }
      default:
        m satisfies never;
    }
  }
  if (open.length > 0 || results.length > 0 || texts.length > 0) flushUser();

  if (opts.cacheLast !== false) {
    const spare = (opts.breakpoints ?? 4) - 1;
    const marks = [step, stepped].filter((b): b is ApiBlock => b !== undefined && CACHEABLE.has(b.type));
    for (const b of marks.slice(0, Math.max(0, spare))) markBlock(out, b);
    markLastBlock(out);
  }
  return out;
}

type ApiBlock = ApiUserBlock | ApiAssistantBlock;
/** Blocks the API takes a cache_control on (thinking blocks, for one, cannot carry it). */
const CACHEABLE = new Set(["text", "image", "document", "tool_use", "tool_result"]);

const lastBlock = (out: ApiMessage[]): ApiBlock | undefined => {
  const content = out.at(-1)?.content;
  return Array.isArray(content) ? content.at(-1) : undefined;
};

/** Puts a breakpoint on one block, by identity (a copy: blocks may be the transcript's own objects). */
function markBlock(out: ApiMessage[], block: ApiBlock): void {
  for (const m of out) {
    if (!Array.isArray(m.content)) continue;
    const i = (m.content as ApiBlock[]).indexOf(block);
    if (i !== -1) m.content[i] = { ...block, cache_control: CACHE } as (typeof m.content)[number];
  }
}

function assistantBlocks(m: Extract<Message, { role: "assistant" }>): ApiAssistantBlock[] {
  const blocks: ApiAssistantBlock[] = [];
  for (const b of m.content) {
    switch (b.type) {
      case "text":
        if (b.text.trim().length > 0) blocks.push(b.citations ? { type: "text", text: b.text, citations: b.citations as Anthropic.TextCitationParam[] } : { type: "text", text: b.text });
        break;
      case "server":
        // A server call and its result travel together; an aborted stream's are incomplete.
        if (m.stop !== "aborted") blocks.push(b.raw as unknown as Anthropic.ContentBlockParam);
        break;
      case "tool_call":
        blocks.push({ type: "tool_use", id: b.id, name: b.name, input: b.input ?? {} });
        break;
      case "thinking":
        // Signature-less thinking (an aborted stream) cannot be replayed.
        if (b.signature && m.stop !== "aborted") blocks.push({ type: "thinking", thinking: b.thinking, signature: b.signature });
        break;
      default:
        b satisfies never;
    }
  }
  if (m.stop === "aborted" && blocks.some((b) => b.type === "text")) blocks.push({ type: "text", text: INTERRUPTED });
  return blocks;
}

const toCall = (b: Anthropic.ToolUseBlockParam): ToolCallBlock => ({ type: "tool_call", id: b.id, name: b.name, input: b.input });

const toolResult = (id: string, content: string, isError: boolean, images: ImageBlock[] = []): Anthropic.ToolResultBlockParam => {
  const text = content.length > 0 ? content : "(no output)";
  return {
    type: "tool_result",
    tool_use_id: id,
    content: images.length === 0 ? text : [{ type: "text", text }, ...images.map(toApiImage)],
    ...(isError ? { is_error: true } : {}),
  };
};

const toApiImage = (b: ImageBlock): Anthropic.ImageBlockParam => ({
  type: "image",
  source: { type: "base64", media_type: b.mediaType as Anthropic.Base64ImageSource["media_type"], data: b.data },
});

function toApiPart(part: MediaPart): ApiUserBlock {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return toApiImage({ type: "image", mediaType: part.mediaType, data: part.data });
    case "document":
      return { type: "document", source: { type: "base64", media_type: part.mediaType, data: part.data } };
    default:
      return part satisfies never;
  }
}

function markLastBlock(out: ApiMessage[]): void {
  const last = out.at(-1);
  const blocks = last?.content;
  if (!Array.isArray(blocks) || blocks.length === 0) return;
  const i = blocks.length - 1;
  blocks[i] = { ...blocks[i]!, cache_control: CACHE } as (typeof blocks)[number];
}

/** The full request body (minus `stream`) for one model. */
export function toApiParams(req: ModelRequest, model: string): Anthropic.MessageCreateParamsNonStreaming {
  const prefixCache: Anthropic.CacheControlEphemeral = req.cacheTtl === "1h" ? { type: "ephemeral", ttl: "1h" } : CACHE;
  const system: Anthropic.TextBlockParam[] = req.system.map((b) =>
    b.cacheBreakpoint && req.cache !== false ? { type: "text", text: b.text, cache_control: prefixCache } : { type: "text", text: b.text },
  );
  return {
    model,
    max_tokens: req.maxTokens,
    system,
    messages: toApiMessages(req.messages, {
      cacheLast: req.cache !== false,
      breakpoints: MAX_BREAKPOINTS - system.filter((b) => b.cache_control).length,
      ...(req.mediaKeepTurns === undefined ? {} : { mediaKeepTurns: req.mediaKeepTurns }),
    }),
    ...(req.tools.length > 0 || req.serverTools?.length ? { tools: [...(req.tools as Anthropic.Tool[]), ...((req.serverTools ?? []) as unknown as Anthropic.ToolUnion[])] } : {}),
  };
}
