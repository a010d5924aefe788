// The per-run facts Hearth puts in front of a message (time, channel, sender, chat). They live
// in the user turn, never in the system prompt, so the cached prefix stays stable.
import type { UserMessage, UserMessageKind } from "./messages.ts";

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
}

/** "2026-11-22 14:05 (Sun), Europe/Berlin" in the owner's timezone. */
export function formatLocalTime(at: number, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", {
      timeZone: timezone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short",
      hourCycle: "h23",
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} (${parts.weekday}), ${timezone}`;
}

export function userTurn(facts: TurnFacts, kind: UserMessageKind = "message"): UserMessage {
  const where = facts.chat ? `${facts.channel}, ${facts.chat}` : facts.channel;
  return {
    role: "user",
    kind,
    text: `[${formatLocalTime(facts.at, facts.timezone)} · ${where} · ${facts.sender}]\n${facts.preface ? `${facts.preface}\n\n` : ""}${facts.text}`,
    ts: facts.at,
  };
}
