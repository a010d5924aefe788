// How a reply reaches Slack: the ReplyTransport behind StreamingReply (which does the
// throttling, merging, tool lines and the split at the limit) over chat.postMessage,
// chat.update and chat.delete, by ids alone, so a reply works for a message replayed from the
// inbox after a restart. Rate limits are the Web API client's: on a 429 it waits the
// Retry-After Slack names and sends again.
//
// The final text is Slack mrkdwn rendered from the markdown (mrkdwn.ts); should Slack refuse it,
// the same text goes once more as plain words. Previews are the raw text, escaped: half an
// answer's markdown is not worth rendering.
import type { ReplyTransport } from "../streaming-reply.ts";
import { escapeSlack, markdownToMrkdwn, markdownToPlain } from "./mrkdwn.ts";

/** The part of the Web API client a reply uses (bolt's `app.client`). */
export interface SlackWeb {
  chat: {
    postMessage(a: { channel: string; text: string; thread_ts?: string; mrkdwn?: boolean; unfurl_links?: boolean; unfurl_media?: boolean; blocks?: unknown[] }): Promise<{ ts?: string }>;
    update(a: { channel: string; ts: string; text: string; blocks?: unknown[] }): Promise<unknown>;
    delete(a: { channel: string; ts: string }): Promise<unknown>;
    postEphemeral(a: { channel: string; user: string; text: string; thread_ts?: string }): Promise<unknown>;
  };
  reactions: {
    add(a: { channel: string; timestamp: string; name: string }): Promise<unknown>;
    remove(a: { channel: string; timestamp: string; name: string }): Promise<unknown>;
  };
}

/** Where a reply goes: a channel (a DM's or a user's id), in a thread when `threadTs`. */
export interface SlackTarget {
  channel: string;
  threadTs?: string;
}

/** Slack's answer to a request it refused as such (not a network error or a rate limit): worth one plain retry. */
const refusedFormat = (err: unknown) => {
  const code = (err as { code?: unknown; data?: { error?: unknown } })?.data?.error;
  return typeof code === "string" && ["invalid_blocks", "msg_too_long", "invalid_arguments", "invalid_attachments", "no_text"].includes(code);
};

export function slackTransport(web: () => SlackWeb, target: SlackTarget): ReplyTransport {
  const thread = target.threadTs ? { thread_ts: target.threadTs } : {};
  const render = (text: string, final: boolean) => (final ? markdownToMrkdwn(text) : escapeSlack(text));
  return {
    async send(text, { final }) {
      const post = (t: string) => web().chat.postMessage({ channel: target.channel, text: t || " ", unfurl_links: false, unfurl_media: false, ...thread });
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
