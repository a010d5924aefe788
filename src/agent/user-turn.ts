// The per-run facts Hearth puts in front of a message (time, channel, sender, chat). They live
// in the user turn, never in the system prompt, so the cached prefix stays stable.
import { formatLocalTime } from "../process/time.ts";
import type { MediaRef, UserMessage, UserMessageKind } from "./messages.ts";

export interface TurnFacts {
  text: string;
  channel: string;
  sender: string;
  /** Group or channel title, for shared chats. */
  chat?: string | undefined;
  /** Context that came before the message (recent unaddressed messages of a group). */
  preface?: string | undefined;
  at: number;
  timezone: string;
  /** Stored attachments (the request builder shows them). */
  media?: MediaRef[] | undefined;
}

export function userTurn(facts: TurnFacts, kind: UserMessageKind = "message"): UserMessage {
  const where = facts.chat ? `${facts.channel}, ${facts.chat}` : facts.channel;
  return {
    role: "user",
    kind,
    text: `[${formatLocalTime(facts.at, facts.timezone)} · ${where} · ${facts.sender}]\n${facts.preface ? `${facts.preface}\n\n` : ""}${facts.text}`,
    ...(facts.media?.length ? { media: facts.media } : {}),
    ts: facts.at,
  };
}
