// A Slack `message` event → Hearth's InboundMessage: which chat (a DM, a channel, a thread of
// either), who wrote, whether the bot is addressed, and the text as the model should read it
// (Slack's `<@U…>`, `<url|label>` and `&amp;` markup turned back into words). Pure: the names of
// people come in from the channel, which looks them up.
import type { InboundMessage } from "../channel.ts";
import { printable } from "../printable.ts";

/** The fields of a Slack message event Hearth reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  files?: SlackFile[];
}

export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
  url_private?: string;
  url_private_download?: string;
  /** Slack's voice clips carry a subtype of their own, and their length. */
  subtype?: string;
  duration_ms?: number;
}

/** Where an answer to the message goes (JSON in `raw`). */
export interface SlackReplyRef {
  channel: string;
  ts: string;
  threadTs?: string;
}

export interface SlackInboundRules {
  bot: { id: string; name: string };
  ownerIds: readonly string[];
  namePattern: RegExp | null;
}

/** Subtypes that are a person's message; every other one (edits, joins, bots) is not. */
const PERSON_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

export type Normalized = { kind: "message"; message: InboundMessage } | { kind: "ignored"; reason: string };

export function normalizeSlackMessage(e: SlackMessageEvent, rules: SlackInboundRules, nameOf: (userId: string) => string): Normalized {
  if (!PERSON_SUBTYPES.has(e.subtype)) return { kind: "ignored", reason: `subtype ${e.subtype}` };
  if (!e.user || e.bot_id || e.user === rules.bot.id) return { kind: "ignored", reason: "not a person" };
  const dm = e.channel_type === "im" || e.channel.startsWith("D");
  const raw = e.text ?? "";
  const mentioned = raw.includes(`<@${rules.bot.id}>`);
  const text = readableText(raw, rules.bot, nameOf);
  const named = rules.namePattern?.test(text) ?? false;
  // A reply in a thread is in the thread; a message that starts one is not yet.
  const threadTs = e.thread_ts && e.thread_ts !== e.ts ? e.thread_ts : undefined;
  const ref: SlackReplyRef = { channel: e.channel, ts: e.ts, ...(threadTs ? { threadTs } : {}) };
  return {
    kind: "message",
    message: {
      id: `${e.channel}:${e.ts}`,
      channel: "slack",
      // An im is the bot and its one person for good: people added to a DM make a new group DM (an mpim), a group here.
      chat: { id: e.channel, ...(dm ? { type: "dm" as const, members: [e.user] } : { type: "group" as const }), ...(threadTs ? { threadId: threadTs } : {}) },
      sender: { id: e.user, name: printable(nameOf(e.user)), isOwner: rules.ownerIds.includes(e.user) },
      text,
      addressed: dm || mentioned || named,
      receivedAt: Math.round(Number(e.ts) * 1000) || Date.now(),
      raw: ref,
    },
  };
}

/**
 * Slack's markup as words: the bot's own mention dropped where it only calls the bot ("@Hearth
 * /stop" → "/stop"), other mentions as "@name", links as their label and address, channel
 * links as "#name", and the three entities decoded.
 */
export function readableText(text: string, bot: { id: string; name: string }, nameOf: (userId: string) => string): string {
  const self = `<@${bot.id}(?:\\|[^>]*)?>`;
  let t = text.trim();
  t = t.replace(new RegExp(`^(?:${self}[\\s,:;.!]*)+`), "");
  t = t.replace(new RegExp(`(?:[\\s,]*${self})+[\\s.!?]*$`), "");
  t = t.replace(new RegExp(self, "g"), `@${bot.name}`);
  t = t.replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => `@${label || nameOf(id)}`);
  t = t.replace(/<#[A-Z0-9]+\|([^>]*)>/g, "#$1");
  t = t.replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, "@$1");
  t = t.replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, (_m, url: string, label: string) => (label === url || `mailto:${label}` === url ? label : `${label} (${url})`));
  t = t.replace(/<((?:https?|mailto):[^>]+)>/g, "$1");
  return t.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&").trim();
}

/** The kind of a Slack file, from its type; a voice clip is audio whatever it states. */
export function fileKind(f: SlackFile): "image" | "document" | "audio" | "video" {
  if (f.subtype === "slack_audio") return "audio";
  const t = f.mimetype ?? "";
  if (t.startsWith("image/")) return "image";
  if (t.startsWith("audio/")) return "audio";
  if (t.startsWith("video/")) return "video";
  return "document";
}

export function isReplyRef(raw: unknown): raw is SlackReplyRef {
  const r = raw as Partial<SlackReplyRef> | null | undefined;
  return typeof r?.channel === "string" && typeof r.ts === "string";
}
