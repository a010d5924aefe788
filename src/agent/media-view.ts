// What the model is shown of a user message's attachments (DESIGN §10), for every provider's
// request builder: the transcript keeps references (MediaRef), this loads the bytes.
//
// Only the last `keepTurns` user turns carry their images and documents; an older one is a
// one-line note naming the stored path. Which turns are old is counted from the end, so a turn
// that became a note stays a note in every later request (the count after it only grows, and
// compaction only removes turns before it): the cached prefix never flips back.
import { readFileSync } from "node:fs";
import type { MediaRef, Message } from "./messages.ts";

export const DEFAULT_MEDIA_KEEP_TURNS = 3;
/** Text-like attachments are sent inline up to this many characters. */
const TEXT_CAP = 50_000;

export type MediaPart =
  | { type: "image"; mediaType: string; data: string }
  | { type: "document"; mediaType: "application/pdf"; data: string }
  | { type: "text"; text: string };

/**
 * Returns, per message index, the parts its attachments become. Messages without media have
 * no entry. Reads files synchronously (they are on local disk, written when the message was
 * accepted); a file that is gone becomes a note, never an error.
 */
export function mediaParts(messages: readonly Message[], keepTurns = DEFAULT_MEDIA_KEEP_TURNS): Map<number, MediaPart[]> {
  const out = new Map<number, MediaPart[]>();
  let turnsAfter = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "user" || m.kind !== "message") continue;
    if (m.media?.length) out.set(i, m.media.flatMap((ref) => partsOf(ref, turnsAfter >= keepTurns)));
    turnsAfter++;
  }
  return out;
}

function partsOf(ref: MediaRef, old: boolean): MediaPart[] {
  const part = partOf(ref, old);
  return part.type === "text" ? [part] : [{ type: "text", text: caption(ref) }, part];
}

function partOf(ref: MediaRef, old: boolean): MediaPart {
  if (old && ref.kind !== "text") return { type: "text", text: placeholder(ref) };
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
    case "text": {
      const text = bytes.toString("utf8");
      const clipped = text.length > TEXT_CAP ? `${text.slice(0, TEXT_CAP)}\n[… cut at ${TEXT_CAP.toLocaleString("en-US")} characters; the whole file is ${ref.path}]` : text;
      if (old) return { type: "text", text: `[file ${ref.name}, stored at ${ref.path}: sent earlier, read it again if needed]` };
      return { type: "text", text: `[file ${ref.name}, stored at ${ref.path}]${ref.note ? ` ${ref.note}` : ""}\n${clipped}` };
    }
    default:
      return ref.kind satisfies never;
  }
}

/** The one line an attachment becomes once it is older than the kept turns. */
export const placeholder = (ref: MediaRef): string => `[${ref.kind === "image" ? "picture" : "PDF"} ${ref.name}, stored at ${ref.path}: no longer shown]`;

/** The line in front of a kept image or document: where it is stored, and any conversion. */
export const caption = (ref: MediaRef): string => `[${ref.kind === "image" ? "picture" : "PDF"} ${ref.name}, stored at ${ref.path}]${ref.note ? ` ${ref.note}` : ""}`;
