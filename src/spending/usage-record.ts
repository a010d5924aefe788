// One line of <home>/usage.jsonl: what one paid call (a model call, a transcription, Hearth's own
// web tools) used and cost, and on whose behalf.
import path from "node:path";
import type { Scope, Usage } from "../agent/messages.ts";
import type { Logger } from "../process/log.ts";
import { readVersionedJsonLines, type JsonLines, type RecordVersions } from "../state/storage.ts";

/** Why a model call happened. Every run has one; compaction and the memory flush are their own. */
export const runPurposes = ["chat", "heartbeat", "cron", "task", "compaction", "flush"] as const;
export type RunPurpose = (typeof runPurposes)[number];

/** Who a model call was made for: the run's session and purpose, never guessed from the key. */
export interface UsageTag {
  session: string;
  scope: Scope;
  purpose: RunPurpose;
  /** The channel and sender of the message that started the run; absent for background work. */
  channel?: string;
  sender?: string;
}

/** What a record paid for: a model call, Hearth's own web tools, or a transcription. */
export const usageKinds = ["model", "web", "transcription", "speech", "embedding"] as const;
export type UsageKind = (typeof usageKinds)[number];

interface RecordBase extends UsageTag {
  /** ISO time of the call's end. */
  at: string;
  /** The owner's local date ("2026-11-23"), in `timezone` at the time: days and months group by it. */
  day: string;
  /** The model that answered (a fallback, if one did), or the transcription model. */
  model: string;
  /** USD at the prices in force when the call was made. */
  costUsd: number;
}

/**
 * A model call (`kind: "model"`; lines written before records had a kind have none and are model
 * calls), or a use of Hearth's own web tools (`kind: "web"`, model LOCAL_WEB_MODEL, no tokens).
 */
export interface TokenUsageRecord extends RecordBase {
  kind?: "model" | "web";
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
  webSearchRequests?: number;
  webFetchRequests?: number;
  /** Hearth's own web tools: a record with model LOCAL_WEB_MODEL and no tokens. */
  localWebSearches?: number;
  localWebFetches?: number;
  /**
   * The call was stopped, stalled or cut off after it started: billed all the same; its output
   * tokens are estimated from the text that arrived.
   */
  unfinished?: true;
}

/** One voice note or audio file sent to the transcription service. */
export interface TranscriptionUsageRecord extends RecordBase {
  kind: "transcription";
  /** The length billed: the service's measure, else the platform's; null when neither said (billed as 0). */
  audioSeconds: number | null;
}

/** One spoken reply (or one part of a long one) sent to the speech service. */
export interface SpeechUsageRecord extends RecordBase {
  kind: "speech";
  /** Characters of text spoken (what speech services bill). */
  characters: number;
}

/** One call to the embeddings service (memory search: chunks in the background, or a query). */
export interface EmbeddingUsageRecord extends RecordBase {
  kind: "embedding";
  /** Tokens the service read. */
  tokens: number;
}

export type UsageRecord = TokenUsageRecord | TranscriptionUsageRecord | SpeechUsageRecord | EmbeddingUsageRecord;

/** A record's kind; a line without one is a model call (or web use, by its model), as before kinds. */
export const kindOf = (r: UsageRecord): UsageKind => r.kind ?? (r.model === LOCAL_WEB_MODEL ? "web" : "model");

/** The "model" of a record that counts a use of Hearth's own web tools (not a model call). */
export const LOCAL_WEB_MODEL = "(hearth web tools)";

export const usageFile = (home: string): string => path.join(home, "usage.jsonl");

/**
 * usage.jsonl's record versions (state/versions.ts RecordVersions): a line without `"v"` is
 * version 1, the records above. A change of a record's shape adds a step here, and every reader
 * (the ledger, `hearth usage`, the dashboard) sees records of the current shape.
 */
export const USAGE_VERSIONS: RecordVersions = { current: 1, steps: [] };

/**
 * The records of usage.jsonl, each at the current version; a torn or wrong-shaped line is skipped
 * (and logged with `log`). Throws NewerStateError for a record a newer Hearth wrote.
 */
export function readUsageRecords(file: string, log?: Logger): JsonLines<UsageRecord> {
  return readVersionedJsonLines(file, isUsageRecord, USAGE_VERSIONS, log);
}

/** What every record says of when and for whom, in the order the file has always had it. */
function recordHead(tag: UsageTag, at: number, day: string): Pick<TokenUsageRecord, "at" | "day" | "session" | "scope" | "purpose" | "channel" | "sender"> {
  return {
    at: new Date(at).toISOString(),
    day,
    session: tag.session,
    scope: tag.scope,
    purpose: tag.purpose,
    ...(tag.channel !== undefined ? { channel: tag.channel } : {}),
    ...(tag.sender !== undefined ? { sender: tag.sender } : {}),
  };
}

export function usageRecord(tag: UsageTag, model: string, usage: Usage, costUsd: number, at: number, day: string, unfinished = false): TokenUsageRecord {
  const write1h = usage.cacheCreation1hTokens ?? 0;
  return {
    kind: model === LOCAL_WEB_MODEL ? "web" : "model",
    ...recordHead(tag, at, day),
    model,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWrite5mTokens: usage.cacheCreation5mTokens ?? Math.max(0, usage.cacheCreationTokens - write1h),
    cacheWrite1hTokens: write1h,
    ...(usage.webSearchRequests ? { webSearchRequests: usage.webSearchRequests } : {}),
    ...(usage.webFetchRequests ? { webFetchRequests: usage.webFetchRequests } : {}),
    ...(usage.localWebSearches ? { localWebSearches: usage.localWebSearches } : {}),
    ...(usage.localWebFetches ? { localWebFetches: usage.localWebFetches } : {}),
    ...(unfinished ? { unfinished: true as const } : {}),
    costUsd,
  };
}

export function transcriptionRecord(tag: UsageTag, model: string, audioSeconds: number | null, costUsd: number, at: number, day: string): TranscriptionUsageRecord {
  return {
    kind: "transcription",
    ...recordHead(tag, at, day),
    model,
    audioSeconds,
    costUsd,
  };
}

export function embeddingRecord(tag: UsageTag, model: string, tokens: number, costUsd: number, at: number, day: string): EmbeddingUsageRecord {
  return { kind: "embedding", ...recordHead(tag, at, day), model, tokens, costUsd };
}

export function speechRecord(tag: UsageTag, model: string, characters: number, costUsd: number, at: number, day: string): SpeechUsageRecord {
  return { kind: "speech", ...recordHead(tag, at, day), model, characters, costUsd };
}

const isCount = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && v >= 0;

export function isUsageRecord(v: unknown): v is UsageRecord {
  const r = v as Partial<TokenUsageRecord & Omit<TranscriptionUsageRecord, "kind">> | null;
  if (
    typeof r !== "object" ||
    r === null ||
    typeof r.day !== "string" ||
    typeof r.session !== "string" ||
    typeof r.purpose !== "string" ||
    typeof r.model !== "string" ||
    typeof r.costUsd !== "number" ||
    !Number.isFinite(r.costUsd)
  ) {
    return false;
  }
  const kind = (r as { kind?: unknown }).kind;
  if (kind === "transcription") return r.audioSeconds === null || isCount(r.audioSeconds);
  if (kind === "speech") return isCount((r as { characters?: unknown }).characters);
  if (kind === "embedding") return isCount((r as { tokens?: unknown }).tokens);
  // A model or web record (or a line from before kinds): the token counts the report sums.
  return (kind === undefined || kind === "model" || kind === "web") && [r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWrite5mTokens, r.cacheWrite1hTokens].every(isCount);
}
