// Signal as a fake platform: the fake signal-cli daemon (test/support/fake-signal-cli.ts), which
// the daemon's real Signal channel reads events from and calls by JSON-RPC. People are phone
// numbers; the group is one allowed group id, where a message is addressed by mentioning the
// bot; a choice is a reaction with its emoji (the question is settled by an edit), a reply quotes
// a message by its timestamp and Hearth's number; the connection is the event stream, cut and refused until
// restored (RPC keeps working, as when signal-cli's stream alone is lost). A message's versions are
// its edits (`send` with `editTimestamp`).
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { waitFor, type Daemon } from "../../support/daemon.ts";
import { startFakeSignalCli, streamOpened, type FakeSignalCli, type FakeSignalMessage } from "../../support/fake-signal-cli.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";

export const SIGNAL_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("signal")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: "signal-cli's send has no idempotency key and cannot list sent messages: a message it sent in the instant before its timestamp was recorded is sent again",
  answersInWords: true,
  takenOnce: "signal-cli acknowledges a message to Signal's servers once it wrote it to the event stream, and takes no acknowledgement from its client",
  privateChatsGrow: "a Signal chat without a group is the account and one person for good; a group is a group whatever its size",
};

export const SIGNAL_OWNER: Person = { role: "owner", id: "+4915111111111", name: "Ann" };
export const SIGNAL_GROUP = Buffer.alloc(32, 7).toString("base64");

export async function startSignalPlatform(): Promise<FakePlatform> {
  return signalPlatform(await startFakeSignalCli());
}

/** A numbered question's choices ("1. Allow once" lines before "Reply to this message with a number…"), and its text before them. */
export function numberedChoices(text: string): { question: string; choices: string[] } | null {
  const at = text.lastIndexOf("\n\nReply to this message with a number");
  if (at < 0) return null;
  const [question, list] = [text.slice(0, text.lastIndexOf("\n\n", at - 1)), text.slice(text.lastIndexOf("\n\n", at - 1) + 2, at)];
  const choices = list.split("\n").map((l) => /^\d+\. (.+)$/.exec(l)?.[1]);
  return choices.every((c) => c !== undefined) ? { question, choices: choices as string[] } : null;
}

/** A question's choices as its text lists them ("1. ✅ Allow once" lines above the hint): emoji and label. */
export function reactionChoices(text: string): Array<{ emoji: string; label: string }> {
  const blocks = text.split("\n\n");
  if (blocks.at(-1) !== "React with your choice, or reply to this message with its number." || blocks.length < 3) return [];
  return blocks.at(-2)!.split("\n").map((line) => {
    const [, emoji, label] = /^\d+\. (\S+) (.+)$/.exec(line) ?? [];
    return { emoji: emoji ?? "", label: label ?? line };
  });
}

/** The chat's messages as a person sees them: a question offers its choices until it is edited to its outcome. */
export function signalView(messages: FakeSignalMessage[]): BotMessage[] {
  return messages.map((m) => ({ id: String(m.timestamp), text: m.text, versions: [...m.versions], choices: reactionChoices(m.text).map((c) => c.label) }));
}

/** The fake platform over a running fake signal-cli (the caller's to close through `close`). */
export function signalPlatform(signal: FakeSignalCli): FakePlatform {
  let people = 0;
  let streams = 0;
  const chatOf = (chat: ChatRef) => (chat.kind === "group" ? SIGNAL_GROUP : chat.with.id);
  const visible = (chat: ChatRef) => signal.messages(chatOf(chat)).filter((m) => !m.deleted);

  return {
    name: "signal",
    capabilities: SIGNAL_TRAITS.capabilities,
    daemonSetup: () => ({
      channels: { signal: { httpUrl: signal.url, account: signal.account, ownerIds: [SIGNAL_OWNER.id], dmPolicy: "pairing", groups: { policy: "allowlist", allow: [SIGNAL_GROUP], requireMention: true } } },
      env: {},
    }),
    async connected(_d: Daemon) {
      // A stream of this daemon's, not the one of the daemon just killed.
      await streamOpened(signal, streams);
      streams = signal.streamsOpened;
    },
    person(role: Role): Person {
      if (role === "owner") return SIGNAL_OWNER;
      people++;
      return { role, id: `+49${role === "stranger" ? 153 : 152}${String(people).padStart(8, "0")}`, name: `${role === "stranger" ? "Sam" : "Bob"}${people}` };
    },
    async send(chat, from, text, opts = {}) {
      signal.receive({
        from: { number: from.id, name: from.name },
        ...(chat.kind === "group" ? { groupId: SIGNAL_GROUP, mentionsBot: opts.addressed === true } : {}),
        text,
        ...(opts.files?.length ? { attachments: opts.files.map((f) => ({ contentType: f.mime, filename: f.name, bytes: f.bytes })) } : {}),
      });
    },
    botMessages: (chat) => signalView(visible(chat)),
    deletedMessages: (chat) => signalView(signal.messages(chatOf(chat))).filter((_, i) => signal.messages(chatOf(chat))[i]!.deleted),
    async choose(chat, message, label, by) {
      const choice = reactionChoices(message.text).find((c) => c.label === label);
      if (!choice) throw new Error(`no choice "${label}" in ${JSON.stringify(message.choices)}`);
      const chatId = chatOf(chat);
      const before = signal.messages(chatId).length;
      const targetTimestamp = Number(message.id);
      signal.receive({ from: { number: by.id, name: by.name }, ...(chat.kind === "group" ? { groupId: SIGNAL_GROUP } : {}), reaction: { emoji: choice.emoji, targetAuthor: signal.account, targetTimestamp } });
      if (by.role === "owner") {
        // Acknowledged when the question is settled: edited, it offers no choices any more.
        await waitFor(`the bot to settle ${message.id}`, () => signal.messages(chatId).some((m) => m.timestamp === targetTimestamp && reactionChoices(m.text).length === 0));
        return "";
      }
      // Anyone else is told, in the chat where they reacted, quoting the question.
      const where = chat.kind === "group" ? chatId : by.id;
      const told = () => signal.messages(where).slice(where === chatId ? before : 0).find((m) => m.quote?.timestamp === targetTimestamp);
      await waitFor(`the bot to answer ${by.name}'s reaction`, () => told() !== undefined);
      return told()!.text;
    },
    async replyTo(chat, message, text, by) {
      signal.receive({ from: { number: by.id, name: by.name }, ...(chat.kind === "group" ? { groupId: SIGNAL_GROUP } : {}), text, quote: { timestamp: Number(message.id), author: signal.account, text: message.text } });
    },
    async react(chat, message, emoji, by) {
      signal.receive({ from: { number: by.id, name: by.name }, ...(chat.kind === "group" ? { groupId: SIGNAL_GROUP } : {}), reaction: { emoji, targetAuthor: signal.account, targetTimestamp: Number(message.id) } });
    },
    sentFiles: (chat) => visible(chat).flatMap((m) => m.attachments.map((a) => ({ name: a.name, bytes: a.bytes }))),
    async holdDelivery(text) {
      let held = false;
      await signal.holdSend((p) => !held && p.message === text && (held = true));
    },
    async loseConnection() {
      signal.pauseEvents();
    },
    async restoreConnection() {
      signal.resumeEvents();
    },
    close: () => signal.close(),
  };
}
