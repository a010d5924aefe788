// What the model is shown of a user message's attachments (DESIGN §10), for every provider's
// request builder: the transcript keeps references (MediaRef), this loads the bytes.
//
// Which turns still show their pictures and documents: the user turns of the view are counted
// from an origin and grouped in blocks of `keepTurns`; only the turns of the current block (the
// one holding the newest turn) show them, everything earlier is a one-line note naming the
// stored path. So a request carries 1 to keepTurns turns of media, the newest turn's always.
// Between steps a request only grows, byte for byte; at a step the previous block's media all
// become notes at once (small text to write to the cache again, once per keepTurns turns),
// where counting from the end would re-write every kept picture on every turn.
//
// The origin is the first user turn of the view, or the last one marked `mediaOrigin`. The
// view is what the transcript on disk holds (since /new, or a compaction's view), so a restart
// computes the same blocks. A compaction marks the current block's first turn in its new view
// (markMediaOrigin): the turns it keeps are counted as before, so no note turns back into a
// picture. Notes are fixed: a turn before the current block can only get older.
// A "turn" is a user message of kind message or steer (someone talking to Hearth).
import { readFileSync } from "node:fs";
import type { MediaRef, Message, UserMessage } from "./messages.ts";

export const DEFAULT_MEDIA_KEEP_TURNS = 3;
/** Text-like attachments are sent inline up to this many characters. */
const TEXT_CAP = 50_000;

export type MediaPart =
  | { type: "image"; mediaType: string; data: string }
  | { type: "document"; mediaType: "application/pdf"; data: string }
  | { type: "text"; text: string };

export interface MediaView {
  /** Per message index, the parts its attachments become. Messages without media have no entry. */
  parts: Map<number, MediaPart[]>;
  /**
   * The message index of the first attachment still shown (not yet a note), or -1 when none is.
   * The next step turns it into a note first: everything before it is fixed for good.
   */
  firstShown: number;
  /**
   * In the first request of a block only: the message index of the first attachment the step
   * just turned into a note, or -1. The request before the previous step cached up to it.
   */
  firstRetired: number;
}

const isTurn = (m: Message): m is UserMessage => m.role === "user" && (m.kind === "message" || m.kind === "steer");

/**
 * The index of the message where the current block begins: attachments from there on are
 * shown, earlier ones are notes. Every message when the view has no turn at all.
 */
export const shownFrom = (messages: readonly Message[], keepTurns = DEFAULT_MEDIA_KEEP_TURNS): number => blocks(messages, keepTurns).from;

/** Where the current block begins, and where the previous one began if the current one holds only its first turn (else -1). */
function blocks(messages: readonly Message[], keepTurns: number): { from: number; previous: number } {
  const turns: number[] = [];
  for (const [i, m] of messages.entries()) {
    if (!isTurn(m)) continue;
    if (m.mediaOrigin) turns.length = 0;
    turns.push(i);
  }
  if (turns.length === 0) return { from: 0, previous: -1 };
  const k = Math.max(1, Math.floor(keepTurns));
  const start = Math.floor((turns.length - 1) / k) * k;
  return { from: turns[start]!, previous: start === turns.length - 1 && start >= k ? turns[start - k]! : -1 };
}

/**
 * The view a compaction records (`after`, made from `before`): the first turn of the current
 * block of `before` carries `mediaOrigin`, so the turns that survive the cut are counted from
 * the same place and keep what they show. A view that no longer holds that turn needs no mark
 * (all its turns are in the current block). Returns `after` itself when nothing changes;
 * messages are never mutated.
 */
export function markMediaOrigin(before: readonly Message[], after: Message[], keepTurns = DEFAULT_MEDIA_KEEP_TURNS): Message[] {
  const from = before[shownFrom(before, keepTurns)];
  const i = from ? after.indexOf(from) : -1;
  const m = after[i];
  if (!m || !isTurn(m) || m.mediaOrigin) return after;
  const out = [...after];
  out[i] = { ...m, mediaOrigin: true };
  return out;
}

/**
 * The parts each message's attachments become. Reads files synchronously (they are on local
 * disk, written when the message was accepted); a file that is gone becomes a note, never an error.
 */
export function mediaView(messages: readonly Message[], keepTurns = DEFAULT_MEDIA_KEEP_TURNS): MediaView {
  const { from, previous } = blocks(messages, keepTurns);
  const parts = new Map<number, MediaPart[]>();
  let firstShown = -1;
  let firstRetired = -1;
  for (const [i, m] of messages.entries()) {
    if (m.role !== "user" || !m.media?.length) continue;
    const old = i < from;
    if (!old && firstShown === -1) firstShown = i;
    if (old && previous !== -1 && i >= previous && firstRetired === -1) firstRetired = i;
    parts.set(i, m.media.flatMap((ref) => partsOf(ref, old)));
  }
  return { parts, firstShown, firstRetired };
}

/** Per message index, the parts its attachments become (mediaView without the boundary). */
export const mediaParts = (messages: readonly Message[], keepTurns = DEFAULT_MEDIA_KEEP_TURNS): Map<number, MediaPart[]> => mediaView(messages, keepTurns).parts;

function partsOf(ref: MediaRef, old: boolean): MediaPart[] {
  const part = partOf(ref, old);
  return part.type === "text" ? [part] : [{ type: "text", text: caption(ref) }, part];
}

function partOf(ref: MediaRef, old: boolean): MediaPart {
  if (old) return { type: "text", text: ref.kind === "text" ? `[file ${ref.name}, stored at ${ref.path}: sent earlier, read it again if needed]` : placeholder(ref) };
  let bytes: Buffer;
  try {
    bytes = readFileSync(ref.file);
  } catch {
    return { type: "text", text: `[${ref.kind} ${ref.name}: the stored file ${ref.path} is missing]` };
  }
  switch (ref.kind) {
    case "image":
      return { type: "image", mediaType: ref.mime, data: bytes.toString("base64") };
    case "document":
      return { type: "document", mediaType: "application/pdf", data: bytes.toString("base64") };
    case "text":
      return { type: "text", text: `[file ${ref.name}, stored at ${ref.path}]${ref.note ? ` ${ref.note}` : ""}\n${clip(bytes.toString("utf8"), ref)}` };
    default:
      return ref.kind satisfies never;
  }
}

/** A text attachment as sent: cut at TEXT_CAP characters, with a line saying where the rest is. */
export const clip = (text: string, ref: MediaRef): string =>
  text.length > TEXT_CAP ? `${text.slice(0, TEXT_CAP)}\n[… cut at ${TEXT_CAP.toLocaleString("en-US")} characters; the whole file is ${ref.path}]` : text;

/** The one line an attachment becomes once it is older than the kept turns. */
export const placeholder = (ref: MediaRef): string => `[${ref.kind === "image" ? "picture" : "PDF"} ${ref.name}, stored at ${ref.path}: no longer shown]`;

/** The line in front of a kept image or document: where it is stored, and any conversion. */
export const caption = (ref: MediaRef): string => `[${ref.kind === "image" ? "picture" : "PDF"} ${ref.name}, stored at ${ref.path}]${ref.note ? ` ${ref.note}` : ""}`;
