// How a reply reaches Slack: the ReplyTransport behind StreamingReply (which does the
// throttling, merging, tool lines and the split at the limit) over chat.postMessage,
// chat.update and chat.delete, by ids alone, so a reply works for a message replayed from the
// inbox after a restart. Rate limits are the Web API client's: on a 429 it waits the
// Retry-After Slack names and sends again.
//
// The final text is Slack mrkdwn rendered from the markdown (mrkdwn.ts); should Slack refuse it,
// the same text goes once more as plain words. Previews are the raw text, escaped: half an
// answer's markdown is not worth rendering.
//
// chat.postMessage has no idempotency key. So every message of a reply with a journal carries
// its stable name (a digest of the journal key and the part's index) as message metadata, and a
// reply open at a restart first looks for it among the chat's (or thread's) newest messages
// (conversations.history / conversations.replies with include_all_metadata): a part Slack posted
// in the instant before a crash kept its ts from being recorded is found and edited, not posted
// a second time.
import { createHash } from "node:crypto";
import type { ReplyTransport } from "../streaming-reply.ts";
import { escapeSlack, markdownToMrkdwn, markdownToPlain } from "./mrkdwn.ts";

/** Message metadata as Slack takes and returns it. */
export interface SlackMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/** A message as conversations.history and conversations.replies list it (the fields read here). */
interface ListedMessage {
  ts?: string;
  user?: string;
  metadata?: Partial<SlackMetadata>;
}

/** The part of the Web API client a reply uses (bolt's `app.client`). */
export interface SlackWeb {
  chat: {
    postMessage(a: { channel: string; text: string; thread_ts?: string; mrkdwn?: boolean; unfurl_links?: boolean; unfurl_media?: boolean; blocks?: unknown[]; metadata?: SlackMetadata }): Promise<{ ts?: string }>;
    update(a: { channel: string; ts: string; text: string; blocks?: unknown[] }): Promise<unknown>;
    delete(a: { channel: string; ts: string }): Promise<unknown>;
    postEphemeral(a: { channel: string; user: string; text: string; thread_ts?: string }): Promise<unknown>;
  };
  reactions: {
    add(a: { channel: string; timestamp: string; name: string }): Promise<unknown>;
    remove(a: { channel: string; timestamp: string; name: string }): Promise<unknown>;
  };
  conversations: {
    history(a: { channel: string; limit: number; include_all_metadata: boolean }): Promise<{ messages?: ListedMessage[] }>;
    replies(a: { channel: string; ts: string; limit: number; include_all_metadata: boolean }): Promise<{ messages?: ListedMessage[] }>;
  };
}

/** Where a reply goes: a channel (a DM's or a user's id), in a thread when `threadTs`. */
export interface SlackTarget {
  channel: string;
  threadTs?: string;
}

/** The metadata event type that names a reply's message. */
export const REPLY_PART_EVENT = "hearth_reply_part";
/** How many of the chat's newest messages a reply open at a restart looks through for its own. */
const LOOK_BACK = 200;

/** The metadata payload naming part `key` (journal key and index): a digest, so no inbox id shows. */
export const partName = (key: string): string => createHash("sha256").update(key).digest("hex").slice(0, 32);

/**
 * The ts of the bot's message named `name` among the newest of the target's chat or thread;
 * undefined when there is none, or when Slack could not list them (the part is then posted:
 * twice is better than never).
 */
async function findPart(web: SlackWeb, target: SlackTarget, bot: string | undefined, name: string): Promise<string | undefined> {
  const args = { channel: target.channel, limit: LOOK_BACK, include_all_metadata: true };
  try {
    const r = target.threadTs ? await web.conversations.replies({ ...args, ts: target.threadTs }) : await web.conversations.history(args);
    const found = (r.messages ?? []).find((m) => (bot === undefined || m.user === bot) && m.metadata?.event_type === REPLY_PART_EVENT && m.metadata.event_payload?.part === name);
    return found?.ts;
  } catch {
    return undefined;
  }
}

/** Slack's answer to a request it refused as such (not a network error or a rate limit): worth one plain retry. */
const refusedFormat = (err: unknown) => {
  const code = (err as { code?: unknown; data?: { error?: unknown } })?.data?.error;
  return typeof code === "string" && ["invalid_blocks", "msg_too_long", "invalid_arguments", "invalid_attachments", "no_text"].includes(code);
};

/** `bot`: the bot's user id (its messages are the only ones a look-up takes). */
export function slackTransport(web: () => SlackWeb, target: SlackTarget, bot?: string): ReplyTransport {
  const thread = target.threadTs ? { thread_ts: target.threadTs } : {};
  const render = (text: string, final: boolean) => (final ? markdownToMrkdwn(text) : escapeSlack(text));
  return {
    async send(text, { final, part }) {
      const name = part ? partName(part.key) : undefined;
      if (part?.lookUp && name) {
        const found = await findPart(web(), target, bot, name);
        if (found) return found;
      }
      const metadata = name ? { metadata: { event_type: REPLY_PART_EVENT, event_payload: { part: name } } } : {};
      const post = (t: string) => web().chat.postMessage({ channel: target.channel, text: t || " ", unfurl_links: false, unfurl_media: false, ...thread, ...metadata });
      let r: { ts?: string };
      try {
        r = await post(render(text, final));
      } catch (err) {
        if (!final || !refusedFormat(err)) throw err;
        r = await post(markdownToPlain(text));
      }
      if (!r.ts) throw new Error("Slack did not name the posted message");
      return r.ts;
    },
    async edit(id, text, { final }) {
      const update = (t: string) => web().chat.update({ channel: target.channel, ts: id, text: t || " " });
      try {
        await update(render(text, final));
      } catch (err) {
        if (!final || !refusedFormat(err)) throw err;
        await update(markdownToPlain(text));
      }
    },
    async delete(id) {
      await web().chat.delete({ channel: target.channel, ts: id });
    },
  };
}
