// Attachments of an accepted message (DESIGN §10): downloaded once, after the router decided to
// accept the message and before the inbox records it, so the inbox record names stored files
// and a replay never needs the platform again. A refused sender's files are never fetched: the
// router calls this only for an allowed message.
import type { MediaRef, Scope } from "../agent/messages.ts";
import type { Attachment, InboundMessage } from "../channels/channel.ts";
import type { Logger } from "../log.ts";
import { memoryScopeFor } from "../memory/visibility.ts";
import { isTooLarge } from "../media/download.ts";
import { mediaDir, storeMedia } from "../media/store.ts";

/** A stalled file endpoint must not hold the chat's messages forever. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

export type Intake = { type: "ok"; media: MediaRef[] } | { type: "refused"; reply: string };

export interface IntakeOptions {
  workspace: string;
  maxBytes: number;
  scope: Scope;
  sessionKey: string;
  log: Logger;
}

/**
 * Downloads and stores every attachment of `m`. Any attachment that cannot be used makes the
 * whole message a refusal: the sender gets one sentence per file and no model call is made
 * (they can send it again in a form that works). Never throws.
 */
export async function takeInAttachments(m: InboundMessage, o: IntakeOptions): Promise<Intake> {
  const media: MediaRef[] = [];
  const problems: string[] = [];
  for (const a of m.attachments ?? []) {
    const r = await takeInOne(a, m, o);
    if (r.type === "stored") media.push(r.ref);
    else problems.push(r.reason);
  }
  return problems.length > 0 ? { type: "refused", reply: problems.join("\n") } : { type: "ok", media };
}

async function takeInOne(a: Attachment, m: InboundMessage, o: IntakeOptions): Promise<{ type: "stored"; ref: MediaRef } | { type: "refused"; reason: string }> {
  if (a.kind === "video") return { type: "refused", reason: "I can't watch videos yet, sorry. Could you describe it in a message?" };
  if (a.kind === "audio") return { type: "refused", reason: "I can't listen to voice messages or audio yet, sorry. Could you type it instead?" };
  if (a.size !== undefined && a.size > o.maxBytes) return { type: "refused", reason: tooLargeText(a.name, a.size, o.maxBytes) };
  let bytes: Uint8Array;
  try {
    bytes = await a.fetch(o.maxBytes, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS));
  } catch (err) {
    if (isTooLarge(err)) return { type: "refused", reason: tooLargeText(a.name, undefined, o.maxBytes) };
    o.log.warn("media.download_failed", { name: a.name, error: err instanceof Error ? err.message : String(err) });
    return { type: "refused", reason: `I couldn't download ${a.name}; please send it again.` };
  }
  const dir = mediaDir(memoryScopeFor(o.scope, o.sessionKey), m.receivedAt);
  try {
    const r = await storeMedia(o.workspace, dir, { bytes, name: a.name, mime: a.mime }, m.receivedAt);
    if (r.type === "stored") o.log.info("media.stored", { path: r.ref.path, kind: r.ref.kind, bytes: bytes.length });
    else o.log.info("media.refused", { name: a.name, reason: r.reason });
    return r;
  } catch (err) {
    o.log.error("media.store_failed", { name: a.name, error: err });
    throw err; // a full disk is answered by the router like any other
  }
}


const mb = (n: number) => (n < 1024 * 1024 ? `${Math.ceil(n / 1024)} KB` : `${(n / (1024 * 1024)).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`);

export const tooLargeText = (name: string, size: number | undefined, max: number): string =>
  `${name} is too large for me${size !== undefined ? ` (${mb(size)})` : ""}; the limit is ${mb(max)}.`;
