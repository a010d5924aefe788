// Attachments of an accepted message (DESIGN §10): downloaded once, after the router decided to
// accept the message and before the inbox records it, so the inbox record names stored files
// and a replay never needs the platform again. A refused sender's files are never fetched: the
// router calls this only for an allowed message.
import { join, relative, sep } from "node:path";
import type { MediaRef, Scope } from "../../agent/messages.ts";
import type { Attachment, InboundMessage } from "../../channels/channel.ts";
import type { Held } from "../../agent/paid-call.ts";
import type { Logger } from "../../process/log.ts";
import { isIndexablePath } from "../../memory/search/index-files.ts";
import { memoryScopeFor } from "../../memory/visibility.ts";
import { isTooLarge } from "../../media/download.ts";
import { mediaDir, storeBytes, storeMedia, writeOnce } from "../../media/store.ts";
import { transcribe, type TranscriptionConfig } from "../../media/transcribe.ts";
import { TRANSCRIPTION_KEY_ENV } from "../../config/config.ts";

/** A stalled file endpoint must not hold the chat's messages forever. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

/** `voice`: transcripts of voice notes, in order, for the message text; `heard`: the line the owner sees. */
export type Intake = { type: "ok"; media: MediaRef[]; voice: string[] } | { type: "refused"; reply: string };

export interface IntakeOptions {
  workspace: string;
  maxBytes: number;
  scope: Scope;
  sessionKey: string;
  /** Whether the sender is the owner: only the owner is told about configuration. */
  isOwner: boolean;
  transcription: TranscriptionConfig | undefined;
  log: Logger;
  /**
   * Called with each stored file the search index takes (a transcript, a PDF's text, a text
   * file; index-files.ts isIndexablePath), relative to the workspace, once it is on disk.
   */
  onTextStored?: (relPath: string) => void;
  /**
   * Called with each file stored from an attachment or made from one (a transcript, a PDF's
   * text), relative to the workspace, before it is indexed: words that came from outside, which
   * taint the run that reads them later (memory/provenance.ts). Must not throw.
   */
  onReceived?: (relPaths: string[]) => void;
  /**
   * Asked before each transcription with the length the platform states (null: none stated):
   * the budget's hold, settled once with the audio's length as billed (the service's measure,
   * else the stated length, else null) or null when the service answered nothing. Refused: the
   * voice note is refused with the reason. Absent: every transcription is made, nothing counted. Must not throw.
   */
  reserveTranscription?: (statedSeconds: number | null) => Held<{ seconds: number | null }>;
}

/**
 * Downloads and stores every attachment of `m`. Any attachment that cannot be used makes the
 * whole message a refusal: the sender gets one sentence per file and no model call is made
 * (they can send it again in a form that works). Never throws.
 */
export async function takeInAttachments(m: InboundMessage, o: IntakeOptions): Promise<Intake> {
  const media: MediaRef[] = [];
  const voice: string[] = [];
  const problems: string[] = [];
  for (const a of m.attachments ?? []) {
    const r = a.kind === "audio" ? await takeInVoice(a, m, o) : await takeInOne(a, m, o);
    if (r.type === "stored") media.push(r.ref);
    else if (r.type === "heard") voice.push(r.text);
    else problems.push(r.reason);
  }
  return problems.length > 0 ? { type: "refused", reply: problems.join("\n") } : { type: "ok", media, voice };
}

/** The message text the model gets for a message with voice notes (marked as such). */
export const withVoice = (text: string, voice: readonly string[]): string =>
  [text, ...voice.map((t) => `[voice note, transcribed] ${t}`)].filter((t) => t.length > 0).join("\n");

/** Downloads a voice note or audio file, stores it, transcribes it and stores the text beside it. */
async function takeInVoice(a: Attachment, m: InboundMessage, o: IntakeOptions): Promise<{ type: "heard"; text: string } | { type: "refused"; reason: string }> {
  if (!o.transcription) {
    return {
      type: "refused",
      reason: o.isOwner
        ? `I can't listen to voice notes until a transcription service is set up: add media.transcription (baseUrl, model, and apiKey or ${TRANSCRIPTION_KEY_ENV}) to config.json — docs/media.md shows OpenAI, Groq and a local whisper server.`
        : "Voice notes aren't supported here, sorry. Could you type it instead?",
    };
  }
  const fetched = await download(a, o);
  if (fetched.type === "refused") return fetched;
  const dir = mediaDir(memoryScopeFor(o.scope, o.sessionKey), m.receivedAt);
  const rel = storeBytes(o.workspace, dir, { bytes: fetched.bytes, name: a.name, mime: a.mime }, m.receivedAt);
  o.onReceived?.([rel]);
  const apiKey = o.transcription.apiKey ?? process.env[TRANSCRIPTION_KEY_ENV]?.trim();
  const held = o.reserveTranscription?.(a.durationSeconds ?? null);
  if (held?.type === "refused") {
    o.log.info("media.transcription_refused", { path: rel, reason: "budget" });
    return { type: "refused", reason: `I couldn't listen to that voice note: ${held.reason}.` };
  }
  const startedAt = Date.now();
  const heard = await transcribe({ ...o.transcription, ...(apiKey ? { apiKey } : {}) }, { bytes: fetched.bytes, name: a.name, mime: a.mime });
  held?.settle(heard.type === "ok" ? { seconds: heard.seconds ?? a.durationSeconds ?? null } : null);
  if (heard.type === "failed") {
    o.log.warn("media.transcription_failed", { path: rel, reason: heard.reason, ms: Date.now() - startedAt });
    return {
      type: "refused",
      reason: o.isOwner
        ? `I couldn't transcribe your voice note (${heard.reason}); it is saved as ${rel}. Please try again or type it.`
        : "I couldn't understand that voice note right now; please try again or type it.",
    };
  }
  writeOnce(join(o.workspace, `${rel}.txt`), new TextEncoder().encode(`${heard.text}\n`));
  // How long the owner waited (behind a typing indicator): what an operator checks for a slow service.
  o.log.info("media.transcribed", { path: rel, chars: heard.text.length, ms: Date.now() - startedAt });
  noteText(o, `${rel}.txt`);
  return { type: "heard", text: heard.text };
}

async function download(a: Attachment, o: IntakeOptions): Promise<{ type: "ok"; bytes: Uint8Array } | { type: "refused"; reason: string }> {
  if (a.size !== undefined && a.size > o.maxBytes) return { type: "refused", reason: tooLargeText(a.name, a.size, o.maxBytes) };
  try {
    return { type: "ok", bytes: await a.fetch(o.maxBytes, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)) };
  } catch (err) {
    if (isTooLarge(err)) return { type: "refused", reason: tooLargeText(a.name, undefined, o.maxBytes) };
    o.log.warn("media.download_failed", { name: a.name, error: err instanceof Error ? err.message : String(err) });
    return { type: "refused", reason: `I couldn't download ${a.name}; please send it again.` };
  }
}

async function takeInOne(a: Attachment, m: InboundMessage, o: IntakeOptions): Promise<{ type: "stored"; ref: MediaRef } | { type: "refused"; reason: string }> {
  if (a.kind === "video") return { type: "refused", reason: "I can't watch videos yet, sorry. Could you describe it in a message?" };
  const startedAt = Date.now();
  const fetched = await download(a, o);
  if (fetched.type === "refused") return fetched;
  const bytes = fetched.bytes;
  const dir = mediaDir(memoryScopeFor(o.scope, o.sessionKey), m.receivedAt);
  try {
    const r = await storeMedia(o.workspace, dir, { bytes, name: a.name, mime: a.mime }, m.receivedAt);
    if (r.type === "stored") {
      o.log.info("media.stored", { path: r.ref.path, kind: r.ref.kind, bytes: bytes.length, ms: Date.now() - startedAt });
      const derived = relative(o.workspace, r.ref.file).split(sep).join("/");
      o.onReceived?.([...new Set([r.ref.path, derived])]);
      for (const rel of new Set([r.ref.path, derived])) noteText(o, rel);
      if (r.ref.kind === "document" && o.onTextStored) {
        // For search only: the model reads the PDF itself. After this message, in the background.
        const { extractPdfTextLater } = await import("../../media/pdf-text.ts");
        void extractPdfTextLater(o.workspace, r.ref.path, (rel) => noteText(o, rel), o.log);
      }
    } else {
      o.log.info("media.refused", { name: a.name, reason: r.reason });
    }
    return r;
  } catch (err) {
    o.log.error("media.store_failed", { name: a.name, error: err });
    throw err; // a full disk is answered by the router like any other
  }
}

/** Tells the search index about a stored text file; its failure never costs the message. */
function noteText(o: IntakeOptions, rel: string): void {
  o.onReceived?.([rel]);
  if (!o.onTextStored || !isIndexablePath(rel)) return;
  try {
    o.onTextStored(rel);
  } catch (err) {
    o.log.warn("media.index_failed", { path: rel, error: err });
  }
}

const mb = (n: number) => (n < 1024 * 1024 ? `${Math.ceil(n / 1024)} KB` : `${(n / (1024 * 1024)).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`);

export const tooLargeText = (name: string, size: number | undefined, max: number): string =>
  `${name} is too large for me${size !== undefined ? ` (${mb(size)})` : ""}; the limit is ${mb(max)}.`;
