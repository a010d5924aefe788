// How a reply reaches Discord: the ReplyTransport behind StreamingReply (which does the
// throttling, merging, tool lines, typing refresh and the 2,000-character split), over
// Discord's REST API by ids alone, so a reply works for a message replayed from the inbox after
// a restart, when nothing is cached.
//
// Exactly once: every message is created with a `nonce` and `enforce_nonce`, so when a create
// is retried after a lost response (by @discordjs/rest on a 5xx or a dropped connection, or by
// StreamingReply's own retries), Discord returns the message it already made instead of
// posting a second one.
import { createHash, randomUUID } from "node:crypto";
import { Routes } from "discord.js";
import type { ReplyTransport } from "../streaming-reply.ts";

/** The part of discord.js's REST client the transport uses (`client.rest`). */
export interface DiscordRest {
  post(route: `/${string}`, options?: { body?: unknown; files?: Array<{ name: string; data: Buffer }> }): Promise<unknown>;
  patch(route: `/${string}`, options?: { body?: unknown }): Promise<unknown>;
  delete(route: `/${string}`): Promise<unknown>;
}

/** Where a reply goes; `replyTo` makes the first message a reply to that message. */
export interface DiscordReplyTarget {
  channelId: string;
  replyTo?: string;
}

/** Hearth's text never pings anyone: not @everyone, not roles, not users, not the replied-to author. */
export const NO_PINGS = { parse: [], replied_user: false } as const;

const NONCE_LENGTH = 25; // Discord's limit

/**
 * A transport for one reply. `rest` is called for every request and throws when the channel is
 * not running. Without `typing` the transport has no typing capability (proactive messages).
 */
export function discordTransport(rest: () => DiscordRest, target: DiscordReplyTarget, opts: { typing: boolean; nonceSeed?: string }): ReplyTransport {
  // A journaled reply seeds its nonces with its stable key: a message created just before a
  // crash is returned again, not duplicated, when the reply is delivered again after it.
  const seed = opts.nonceSeed ?? randomUUID();
  /** How many messages with each text were created: a retry reuses its nonce, a repeat does not. */
  const created = new Map<string, number>();
  let replied = false;

  const nonceFor = (text: string) => {
    const n = created.get(text) ?? 0;
    return createHash("sha256").update(`${seed}\0${n}\0${text}`).digest("base64url").slice(0, NONCE_LENGTH);
  };

  const transport: ReplyTransport = {
    async send(text) {
      const reference = target.replyTo && !replied ? { message_reference: { message_id: target.replyTo, channel_id: target.channelId, fail_if_not_exists: false } } : {};
      const body = { content: text, allowed_mentions: NO_PINGS, nonce: nonceFor(text), enforce_nonce: true, ...reference };
      const message = (await rest().post(Routes.channelMessages(target.channelId), { body })) as { id: string };
      created.set(text, (created.get(text) ?? 0) + 1);
      replied = true;
      return message.id;
    },
    async edit(id, text) {
      // Discord accepts an edit to the same text, so there is no "not modified" error to swallow.
      await rest().patch(Routes.channelMessage(target.channelId, id), { body: { content: text, allowed_mentions: NO_PINGS } });
    },
    async delete(id) {
      await rest().delete(Routes.channelMessage(target.channelId, id));
    },
  };
  if (opts.typing) {
    transport.typing = async () => {
      await rest().post(Routes.channelTyping(target.channelId));
    };
  }
  return transport;
}
