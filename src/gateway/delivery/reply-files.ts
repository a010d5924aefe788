// Files a reply puts in its chat — what send_file sends, and the workspace pictures an answer
// shows as markdown images — each at most once per reply, through the outbox: a run replayed
// after a crash, or a final text delivered again from its record, never sends one twice.
//
// Markdown images: the reply's text stream passes through `withMarkdownImages`, which shows
// the text without the images it will send (the preview and the final alike, see
// media/markdown-images.ts) and sends the pictures after the final text. It sits inside the
// outbox's wrapper: the outbox records the answer as the model wrote it, and a re-delivery
// after a crash goes through the same wrapper, which sends only the pictures not yet recorded.
// A picture goes by send_file's outgoing-file rule (send-file.ts): checked to plan the text,
// then opened again to send, and only the bytes read from that descriptor are sent.
import { createHash } from "node:crypto";
import type { OutgoingFile, SentFile } from "../../agent/tool.ts";
import type { Scope } from "../../agent/messages.ts";
import { checkOutgoing, readOutgoing, type OutgoingCheck, type OutgoingInfo } from "../../agent/tools/send-file.ts";
import { relaySink, type InboundMessage, type ReplyJournal, type ReplySink } from "../../channels/channel.ts";
import type { Logger } from "../../process/log.ts";
import { findImageRefs, isUrl, pendingRefStart, removeRefs, targetPath, type ImageRef } from "../../media/markdown-images.ts";
import { showActivityWhile } from "./chat-activity.ts";
import { announceHeard, holdUntil, type DeliveryDeps, type HeardEntry } from "./heard-line.ts";
import { withSpokenReply, type Speaker } from "./spoken-reply.ts";

/** What an answer's reply needs besides DeliveryDeps: the entry it answers and where its files may come from. */
export interface AnswerReplyDeps extends DeliveryDeps {
  /** The inbox entry named `id` (Inbox.get); undefined once it is done or unknown. */
  inbox: { get(id: string): (HeardEntry & { sessionKey: string; voiceNote?: true }) | undefined };
  /** The session's record (SessionStore.get), for its scope; undefined for a new session. */
  sessions: { get(key: string): { scope: Scope } | undefined };
  config: { workspace: string };
  /** The speaker of the answer to `entry` (voice-replies.ts), or null: text only. Absent: never spoken. Must not throw. */
  speakerFor?: (entry: HeardEntry & { sessionKey: string; voiceNote?: true }, scope: Scope) => Speaker | null;
}

/**
 * Sends `file` for the reply to entry `replyId`, unless one of its keys was sent for it before:
 * `file:<hash of bytes and caption>` always (a replayed run gets new tool call ids from the
 * model, but the same file and caption), plus `extraKeys` (the tool call id). The chat shows
 * "sending a photo/file" meanwhile.
 */
export async function sendFileOnce(ctx: DeliveryDeps, replyId: string, m: InboundMessage, file: OutgoingFile, extraKeys: string[] = []): Promise<SentFile> {
  const hash = createHash("sha256").update(file.data).update(`\0${file.caption ?? ""}`).digest("hex").slice(0, 16);
  let printed = false;
  const r = await ctx.outbox.sendFileOnce(replyId, [...extraKeys, `file:${hash}`], () =>
    showActivityWhile(ctx.channels, m, file.asPhoto ? "upload_photo" : "upload_document", async () => {
      const id = await ctx.channels.sendFile(m, file);
      printed = id === null;
      return id ?? "";
    }),
  );
  return { type: r === "already" ? "already" : printed ? "printed" : "sent" };
}

/**
 * The reply to an inbox message, for a run or for a re-delivery after a restart (`journal.key`
 * is the inbox id that names the reply): held behind the entry's heard line, if it has one.
 * Channels that can send files get markdown images as pictures; the terminal shows the text as
 * written (the path is in it).
 */
export function openAnswerReply(ctx: AnswerReplyDeps, m: InboundMessage, journal: ReplyJournal): ReplySink {
  const entry = ctx.inbox.get(journal.key);
  // The heard line of a voice note comes first, also when the answer is re-delivered after a crash.
  const sink = entry?.heard?.length ? holdUntil(announceHeard(ctx, entry), ctx.channels.openReply(m, journal)) : ctx.channels.openReply(m, journal);
  const sessionKey = entry?.sessionKey;
  if (entry === undefined || sessionKey === undefined) return sink;
  const scope: Scope = ctx.sessions.get(sessionKey)?.scope ?? (sessionKey === "main" ? "main" : "shared");
  const speaker = ctx.speakerFor?.(entry, scope) ?? null;
  const spoken = (s: ReplySink) => (speaker ? withSpokenReply(s, ctx, journal.key, m, speaker) : s);
  if (!ctx.channels.get(m.channel)?.sendFile) return spoken(sink);
  const log = ctx.log.child({ reply: journal.key });
  const request = (requested: string) => ({ workspace: ctx.config.workspace, scope, sessionKey, requested });
  return spoken(withMarkdownImages(sink, {
    check: (target) => checkOutgoing(request(target), log),
    send: async (image) => {
      const file = readOutgoing(request(image.target), log);
      // Changed since the check (a link swapped in): not sent, whatever it is now.
      if (!file.ok) throw new Error(file.reason);
      await sendFileOnce(ctx, journal.key, m, { ...file.file, ...(image.caption !== undefined ? { caption: image.caption } : {}) });
    },
    log,
  }));
}

export interface MarkdownImageDeps {
  /** Whether the chat may be sent this file (synchronous: it runs while the text streams). Must not throw. */
  check(path: string): OutgoingCheck;
  /** Sends one picture for the reply, at most once, checking it again; rejects when refused now or by the platform. */
  send(image: PlannedImage): Promise<void>;
  log: Logger;
}

/** A picture an answer will send: the path as written, and what the check saw. */
export interface PlannedImage extends OutgoingInfo {
  target: string;
  caption?: string;
}

/** What an answer shows as text, and the pictures it sends after it. */
export interface ImagePlan {
  text: string;
  images: PlannedImage[];
  /** References left as written, with why (logged for the final text). */
  kept: Array<{ target: string; reason: string }>;
}

/** Applies the rule of media/markdown-images.ts to `raw`; `streaming` holds back an unfinished reference. */
export function planImages(raw: string, check: MarkdownImageDeps["check"], streaming: boolean): ImagePlan {
  const plan: ImagePlan = { text: raw, images: [], kept: [] };
  if (!raw.includes("![")) return plan;
  const text = streaming ? raw.slice(0, pendingRefStart(raw)) : raw;
  const taken: ImageRef[] = [];
  const queued = new Set<string>();
  for (const ref of findImageRefs(text)) {
    if (isUrl(ref.target)) {
      plan.kept.push({ target: ref.target, reason: "a URL (never fetched)" });
      continue;
    }
    const target = targetPath(ref.target);
    const c = check(target);
    if (!c.ok) {
      plan.kept.push({ target: ref.target, reason: c.reason });
      continue;
    }
    taken.push(ref);
    const caption = ref.alt.slice(0, 1024);
    const key = `${c.file.file}\0${caption}`;
    if (queued.has(key)) continue;
    queued.add(key);
    plan.images.push({ ...c.file, target, ...(caption ? { caption } : {}) });
  }
  plan.text = removeRefs(text, taken);
  // An answer that was only pictures still says what it sent (a preview must become something).
  if (taken.length > 0 && plan.text.trim() === "") plan.text = plan.images.map((i) => `🖼 ${i.caption ?? i.name}`).join("\n");
  return plan;
}

/** `sink` with the markdown images of the answer taken out of its text and sent as pictures. */
export function withMarkdownImages(sink: ReplySink, deps: MarkdownImageDeps): ReplySink {
  let raw = "";
  let shown = "";
  // The preview asks about the same paths at every delta: the file system once per path is
  // enough while streaming (the final text is checked afresh).
  const checked = new Map<string, OutgoingCheck>();
  const checkCached = (p: string) => checked.get(p) ?? checked.set(p, deps.check(p)).get(p)!;
  const show = (reset: boolean, notice?: boolean) => {
    const next = planImages(raw, checkCached, true).text;
    if (!reset && next.startsWith(shown)) {
      if (next.length > shown.length) sink.textDelta(next.slice(shown.length), notice);
    } else {
      sink.textReset(next);
    }
    shown = next;
  };
  return relaySink(sink, {
    textDelta: (t, notice) => {
      raw += t;
      show(false, notice);
    },
    textReset: (t) => {
      raw = t;
      show(true);
    },
    finish: async (text, outcome) => {
      if (outcome === "kept") return sink.finish(text, outcome);
      const plan = planImages(text, deps.check, false);
      for (const k of plan.kept) deps.log.info("reply.image_kept_as_text", k);
      await sink.finish(plan.text, outcome);
      for (const image of plan.images) {
        try {
          await deps.send(image);
        } catch (error) {
          deps.log.warn("reply.image_not_sent", { file: image.name, error });
        }
      }
    },
  });
}
