// Who can read a chat, decided on every message from the members its adapter reports (DESIGN §3):
// a chat is private only while the platform calls it a direct chat and nobody but its sender is
// in it with the bot. Anyone else in it makes it shared from that message on, and it stays shared
// (`chat-audiences.json`) when they leave, until the owner re-checks it with /private in it: a
// person leaving says nothing about what they read or who comes next. The owner is told once
// when a chat they had alone with Hearth gains someone (grown-chat.ts).
import { z } from "zod";
import { channelIdSchema } from "../../channels/registry.ts";
import type { ChannelId, DeliveryTarget, InboundMessage } from "../../channels/channel.ts";
import type { Logger } from "../../process/log.ts";
import { loadJsonFile, writeFileAtomic } from "../../state/storage.ts";

/** What the gateway makes of who can read a message's chat. */
export type Audience =
  /** The platform's direct chat with the sender alone: the owner's is main, anyone else's their own. */
  | { type: "private" }
  /**
   * Others can read it. `direct`: the platform calls it a direct chat, or it was one Hearth knew as
   * private: the owner is answered there as in a group (its shared session), anyone else as the
   * group rules say.
   */
  | { type: "shared"; direct: boolean };

/** A chat has someone in it it was private without: `others` are who can read it besides the owner, as reported. */
export interface ChatGrowth {
  /** It was the owner's private chat (Hearth answered the owner there with their memory). */
  owners: boolean;
  others: string[];
}

/** The message's sender is alone with the bot in a chat the platform calls direct, as its adapter reported the chat's members. */
export function aloneWithBot(m: InboundMessage): boolean {
  if (m.channel === "cli") return true;
  // A message from before members were reported (a replay, a test's literal) has none: shared.
  const members = m.chat.members;
  return m.chat.type === "dm" && Array.isArray(members) && members.length === 1 && members[0] === m.sender.id;
}

/** Who besides its sender the message's chat has, as reported ([] when the adapter could not tell). */
export const othersIn = (m: InboundMessage): string[] => (Array.isArray(m.chat.members) ? m.chat.members.filter((id) => id !== m.sender.id) : []);

type Mark =
  /** Answered as private, with `with` alone; `owner`: the owner's (with their memory). */
  | { state: "private"; channel: ChannelId; chatId: string; with: string; owner: boolean; at: number }
  /** Someone else was in it: shared until the owner re-checks it. */
  | { state: "shared"; channel: ChannelId; chatId: string; since: number };

const markSchema = z.discriminatedUnion("state", [
  z.object({ state: z.literal("private"), channel: channelIdSchema, chatId: z.string(), with: z.string(), owner: z.boolean(), at: z.number() }),
  z.object({ state: z.literal("shared"), channel: channelIdSchema, chatId: z.string(), since: z.number() }),
]) as z.ZodType<Mark>;
const fileSchema = z.object({ version: z.literal(1), chats: z.array(markSchema) });

/** Chats remembered at most; past it the oldest private ones are forgotten first (a shared mark is the one that protects). */
const MAX_CHATS = 10_000;

/** What `/private` found: made private again, private already, others in it, or a group that never can be. */
export type Reopening = { type: "reopened" } | { type: "private" } | { type: "others"; others: string[] } | { type: "group" };

export class ChatAudiences {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #marks = new Map<string, Mark>();

  private constructor(path: string, marks: Mark[], log: Logger, clock: () => number) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
    for (const m of marks) this.#marks.set(keyOf(m.channel, m.chatId), m);
  }

  /** Reads chat-audiences.json; missing is empty, a damaged file is set aside (storage.ts) and the store starts empty. */
  static open(path: string, log: Logger, clock: () => number = Date.now): ChatAudiences {
    const loaded = loadJsonFile(path, { schema: fileSchema, log, versions: { current: 1, steps: [] }, now: clock() });
    return new ChatAudiences(path, loaded.status === "ok" ? loaded.value.chats : [], log, clock);
  }

  /**
   * Who can read m's chat now. A chat with someone in it it was private without is marked shared
   * for good (written before this returns) and `grew` says so once. `ownerIds`: the channel's.
   */
  judge(m: InboundMessage, ownerIds: readonly string[]): { audience: Audience; grew?: ChatGrowth } {
    if (m.channel === "cli") return { audience: { type: "private" } };
    const key = keyOf(m.channel, m.chat.id);
    const mark = this.#marks.get(key);
    const direct = m.chat.type === "dm" || mark !== undefined;
    if (aloneWithBot(m) && (mark === undefined || (mark.state === "private" && mark.with === m.sender.id))) return { audience: { type: "private" } };
    if (mark?.state === "shared" || !direct) return { audience: { type: "shared", direct } };
    // Someone else can read it now: a chat known as private, or a direct chat the owner is in,
    // stays shared until the owner re-checks it. Others' (a stranger's room of three) need no mark.
    const members = Array.isArray(m.chat.members) ? m.chat.members : [];
    if (mark || members.some((id) => ownerIds.includes(id))) {
      this.#set({ state: "shared", channel: m.channel, chatId: m.chat.id, since: this.#clock() });
      this.#log.info("audience.shared", { channel: m.channel, chat: m.chat.id, members: members.length, known: mark !== undefined });
      const owners = mark?.state === "private" && mark.owner;
      return { audience: { type: "shared", direct }, grew: { owners, others: members.filter((id) => !ownerIds.includes(id)) } };
    }
    return { audience: { type: "shared", direct } };
  }

  /** m's chat was answered as private (`owner`: in the owner's main scope): remembered, so that someone joining is noticed. */
  notePrivate(m: InboundMessage, owner: boolean): void {
    if (m.channel === "cli") return;
    const mark = this.#marks.get(keyOf(m.channel, m.chat.id));
    if (mark?.state === "private" && mark.with === m.sender.id && mark.owner === owner) return;
    this.#set({ state: "private", channel: m.channel, chatId: m.chat.id, with: m.sender.id, owner, at: this.#clock() });
  }

  /**
   * `/private` from the owner in m's chat: private again when the platform calls it direct and the
   * members the adapter reports for this very message are the owner alone.
   */
  reopen(m: InboundMessage): Reopening {
    const mark = this.#marks.get(keyOf(m.channel, m.chat.id));
    if (m.chat.type !== "dm" && mark === undefined) return { type: "group" };
    if (!aloneWithBot(m)) return { type: "others", others: othersIn(m) };
    if (mark?.state !== "shared") return { type: "private" };
    this.#set({ state: "private", channel: m.channel, chatId: m.chat.id, with: m.sender.id, owner: true, at: this.#clock() });
    this.#log.info("audience.reopened", { channel: m.channel, chat: m.chat.id });
    return { type: "reopened" };
  }

  /** Whether the chat is marked shared (someone else was in it). */
  isShared(to: Pick<DeliveryTarget, "channel" | "chatId">): boolean {
    return this.#marks.get(keyOf(to.channel, to.chatId))?.state === "shared";
  }

  /** The owner's private chats Hearth knows, the most recently confirmed first. */
  ownerChats(): DeliveryTarget[] {
    return [...this.#marks.values()]
      .filter((m): m is Extract<Mark, { state: "private" }> => m.state === "private" && m.owner)
      .sort((a, b) => b.at - a.at)
      .map((m) => ({ channel: m.channel, chatId: m.chatId }));
  }

  #set(mark: Mark): void {
    const key = keyOf(mark.channel, mark.chatId);
    this.#marks.delete(key);
    this.#marks.set(key, mark);
    if (this.#marks.size > MAX_CHATS) {
      const oldest = [...this.#marks].find(([, m]) => m.state === "private") ?? [...this.#marks][0]!;
      this.#marks.delete(oldest[0]);
    }
    // Fsynced: a chat marked shared must not be taken for private after a crash. A write that
    // fails (a full disk) costs no message: the mark holds in memory, and the next change
    // writes the whole file again.
    try {
      writeFileAtomic(this.#path, `${JSON.stringify({ version: 1, chats: [...this.#marks.values()] }, null, 1)}\n`, 0o600, { sync: true });
    } catch (error) {
      this.#log.error("audience.save_failed", { path: this.#path, error, action: "kept in memory; written with the next change" });
    }
  }
}

const keyOf = (channel: ChannelId, chatId: string) => `${channel}\0${chatId}`;
