// The heartbeat's view of the owner's conversation: the text of main's last few exchanges,
// bounded, so a heartbeat's cost does not grow with main's transcript.
import { textOf, type Message } from "../agent/messages.ts";

/** Exchanges in the digest. */
export const DIGEST_EXCHANGES = 5;
/** The whole digest, in characters: about 2,000 tokens at about 4 characters a token. */
export const DIGEST_MAX_CHARS = 8_000;
const USER_CHARS = 600;
const REPLY_CHARS = 900;

interface Exchange {
  asked: string;
  replies: string[];
}

/**
 * The last DIGEST_EXCHANGES exchanges of `messages` (main's model view): what the owner wrote
 * (with the line Hearth put in front: time, channel, sender) and Hearth's answer text. Tool
 * calls and results are left out. Older exchanges are dropped first when the digest is too
 * long. "" when there was no exchange yet.
 */
export function mainDigest(messages: Message[]): string {
  const exchanges: Exchange[] = [];
  for (const m of messages) {
    if (m.role === "user" && (m.kind === "message" || m.kind === "steer")) {
      exchanges.push({ asked: m.text, replies: [] });
      if (exchanges.length > DIGEST_EXCHANGES) exchanges.shift();
    } else if (m.role === "assistant") {
      const text = textOf(m).trim();
      const last = exchanges.at(-1);
      if (text && last) last.replies.push(text);
    }
  }
  const rendered = exchanges.map(render);
  while (rendered.length > 0 && rendered.join("\n\n").length > DIGEST_MAX_CHARS) rendered.shift();
  return rendered.join("\n\n");
}

function render(e: Exchange): string {
  const reply = e.replies.join("\n");
  return `Owner: ${cut(e.asked.trim(), USER_CHARS)}\nHearth: ${reply ? cut(reply, REPLY_CHARS) : "(no answer)"}`;
}

const cut = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max)}…`);
