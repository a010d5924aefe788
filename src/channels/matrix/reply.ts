// How a reply reaches a Matrix room: the ReplyTransport behind StreamingReply (throttling,
// merging, the split at the message limit), with edits as `m.replace` events, the first message
// a reply to the one answered, every message of a thread's answer in the thread, and final text
// as HTML (`formatted_body`) beside the plain `body`.
//
// Exactly once: every event is sent with a transaction id; the homeserver answers a repeated
// transaction with the event it already made. A journaled reply derives its transaction ids from
// its stable key, so a send retried after a lost response or a crash never posts twice.
import { createHash, randomUUID } from "node:crypto";
import type { ReplyTransport } from "../streaming-reply.ts";
import { renderHtml } from "./html.ts";

/** The requests the transport makes (the channel's client, retried on 429). */
export interface MatrixSender {
  sendEvent(roomId: string, type: string, content: Record<string, unknown>, txnId: string): Promise<string>;
  redact(roomId: string, eventId: string, txnId: string): Promise<void>;
  typing(roomId: string): Promise<void>;
}

export interface MatrixReplyTarget {
  roomId: string;
  threadId?: string;
  /** The event answered: the first message replies to it. */
  replyTo?: string;
}

/** A message's content: plain `body`, and HTML for final text (previews stay plain). */
export function messageContent(text: string, final: boolean): Record<string, unknown> {
  const html = final ? renderHtml(text) : null;
  return { msgtype: "m.text", body: text, ...(html ? { format: "org.matrix.custom.html", formatted_body: html } : {}), "m.mentions": {} };
}

export function matrixTransport(sender: () => MatrixSender, target: MatrixReplyTarget, opts: { typing: boolean; txnSeed?: string }): ReplyTransport {
  const seed = opts.txnSeed ?? randomUUID();
  const used = new Map<string, number>();
  /** The same request again (a retry) reuses its id; a repeat of the same text does not. */
  const txn = (what: string) => {
    const n = used.get(what) ?? 0;
    return { id: createHash("sha256").update(`${seed}\0${n}\0${what}`).digest("base64url").slice(0, 32), done: () => used.set(what, n + 1) };
  };
  let last = target.replyTo;

  const transport: ReplyTransport = {
    async send(text, { final }) {
      const relation = target.threadId
        ? { "m.relates_to": { rel_type: "m.thread", event_id: target.threadId, is_falling_back: true, "m.in_reply_to": { event_id: last ?? target.threadId } } }
        : last && last === target.replyTo
          ? { "m.relates_to": { "m.in_reply_to": { event_id: last } } }
          : {};
      const t = txn(`send\0${text}`);
      const id = await sender().sendEvent(target.roomId, "m.room.message", { ...messageContent(text, final), ...relation }, t.id);
      t.done();
      last = id;
      return id;
    },
    async edit(id, text, { final }) {
      const content = messageContent(text, final);
      const t = txn(`edit\0${id}\0${text}`);
      await sender().sendEvent(target.roomId, "m.room.message", { ...content, body: `* ${text}`, "m.new_content": content, "m.relates_to": { rel_type: "m.replace", event_id: id } }, t.id);
      t.done();
    },
    async delete(id) {
      const t = txn(`redact\0${id}`);
      await sender().redact(target.roomId, id, t.id);
      t.done();
    },
  };
  if (opts.typing) transport.typing = () => sender().typing(target.roomId);
  return transport;
}
