// The fake platform a channel's conformance run talks to: what a person can do on the platform
// (write to the bot, press a choice, send a file, lose the connection) and what a person sees
// there (the bot's messages with their edits, deleted messages, the files it sent). Each channel
// wraps its test fake (the Bot API emulator, the fake Discord, `hearth chat` processes) in one of
// these; the scenarios (scenarios.ts) are written once against it.
import type { ChannelCapabilities } from "../../../src/channels/capabilities.ts";
import type { Daemon } from "../../support/daemon.ts";

/** Who writes: the owner, someone the owner has not approved, a member of the allowed group. */
export type Role = "owner" | "stranger" | "member";

/** Someone on the platform. Each `person("stranger")` is a new one, never seen by the daemon. */
export interface Person {
  readonly role: Role;
  /** The platform's id of the person (a user id), as `hearth pairing list` names it. */
  readonly id: string;
  readonly name: string;
}

/**
 * A conversation with the bot: a person's private chat with it, or the one allowed group.
 * `label` names another private chat of theirs, where the platform lets a person have several (a
 * Matrix room, a mail thread): the platform makes it, titled "Rooms", on first use.
 */
export type ChatRef = { kind: "dm"; with: Person; label?: string } | { kind: "group" };

/** A message of the bot's, as a person sees it now. */
export interface BotMessage {
  id: string;
  /** Its text now, as shown (an answer of plain words shows as those words). */
  text: string;
  /** Every text it showed, first to last (a streamed answer's previews, then the final text). */
  versions: string[];
  /** The choices offered under it now (button labels, or the numbered choices); [] when none. */
  choices: string[];
  /**
   * The platform cut it off before it was complete: what a terminal client printed before its
   * daemon died. A platform whose messages stay editable never sets it (a stale preview there is
   * the bot's to replace).
   */
  interrupted?: boolean;
}

/** A file a person sends to the bot. */
export interface InboundFile {
  kind: "photo" | "document";
  name: string;
  mime: string;
  bytes: Uint8Array;
}

/** A file the bot sent into a chat. */
export interface SentFile {
  name: string;
  bytes: Uint8Array;
}

/** What a fake platform offers, known before it starts: which scenarios it can run. */
export interface PlatformTraits {
  capabilities: ChannelCapabilities;
  /** It implements `holdDelivery` (the crash between an answer and its delivery can be caught). */
  holdsDeliveries: boolean;
  /**
   * Receiving and sending are one connection (WhatsApp's socket): while it is lost nothing can
   * be sent either, so the outage scenario, which expects an answer sent during it, cannot run.
   */
  oneConnection?: boolean;
  /**
   * It implements `holdAnswer`, and a message the platform took before a crash let its id be
   * recorded is recognised when sent again (the same id, or found before posting again): true.
   * Otherwise why that crash scenario cannot run.
   */
  sameAfterCrash?: true | string;
  /**
   * A message the platform handed to the daemon comes again after a kill -9 that came before the
   * daemon had it on disk (an offset not yet confirmed, an envelope not yet acknowledged, a
   * history read after the restart): absent. Otherwise why it cannot.
   */
  takenOnce?: string;
  /** It implements `logOut` (the platform can unlink the bot's device). */
  logsOut?: boolean;
  /**
   * Its questions are answered in words, not by buttons of their own (WhatsApp, Signal, email):
   * a reply quoting the question (or a reaction on it) names it, and a bare number may arrive
   * that names none. Absent: every answer is a press, whose key names its question.
   */
  answersInWords?: boolean;
  /**
   * A private chat with the bot can gain members (a Matrix room someone joins, a mail thread
   * that gains a Cc): `true`, and the fake implements `addMember` and `removeMember`; otherwise
   * why it cannot.
   */
  privateChatsGrow: true | string;
}

/** What a daemon for this platform needs: its `channels` entries and its environment. */
export interface DaemonSetup {
  channels: Record<string, unknown>;
  env: Record<string, string>;
}

export interface FakePlatform {
  /** The channel's name in reports ("telegram"). */
  readonly name: string;
  /** What the channel can do; the scenarios it cannot run are skipped with the reason. */
  readonly capabilities: ChannelCapabilities;
  daemonSetup(): DaemonSetup;
  /**
   * Called after every daemon start (and restart): resolves once the channel is connected to the
   * platform and anything the adapter runs beside it (a listening terminal) is ready.
   */
  connected(daemon: Daemon): Promise<void>;
  /** The owner (always the same person), or a new stranger or group member. */
  person(role: Role): Person;
  /**
   * `from` writes `text` in `chat`. `addressed`: in a group, whether the message is addressed to
   * the bot (a mention); ignored in a DM. `files` come with the message (needs `filesIn`).
   * Resolves once the platform has the message (not when it is answered).
   */
  send(chat: ChatRef, from: Person, text: string, opts?: { addressed?: boolean; files?: InboundFile[] }): Promise<void>;
  /** The bot's messages in the chat now, oldest first; deleted ones are gone. */
  botMessages(chat: ChatRef): BotMessage[];
  /** The bot's messages in the chat that it deleted. */
  deletedMessages(chat: ChatRef): BotMessage[];
  /**
   * `by` picks the choice labelled `label` under `message`: presses the button, or answers the
   * way that names that question (a reaction on it, a reply quoting it or answering its mail with
   * the choice's number). Resolves once the bot has acknowledged it, with what `by` was told (a
   * button's answer: "Only the owner can approve."); "" where the platform shows no such answer.
   */
  choose(chat: ChatRef, message: BotMessage, label: string, by: Person): Promise<string>;
  /**
   * Optional: `by` replies to `message` with `text`, naming it as the platform does (WhatsApp's
   * and Signal's quote, a mail's In-Reply-To). Resolves once the platform has the reply.
   */
  replyTo?(chat: ChatRef, message: BotMessage, text: string, by: Person): Promise<void>;
  /** Optional: `by` reacts to `message` with `emoji` (Signal). Resolves once the platform has the reaction. */
  react?(chat: ChatRef, message: BotMessage, emoji: string, by: Person): Promise<void>;
  /**
   * Optional: `by` writes `text` into the conversation `message` is in, naming none of the bot's
   * messages (email: a mail into its thread answering the thread's first mail, the person's own).
   * Absent: `send` into the chat does it.
   */
  writeBeside?(chat: ChatRef, message: BotMessage, text: string, by: Person): Promise<void>;
  /** Files the bot sent into the chat, oldest first (needs `filesOut`). */
  sentFiles(chat: ChatRef): SentFile[];
  /**
   * Optional: the next delivery whose text is exactly `text` is held on its way: the platform
   * never applies it and never answers (the bot dies before it arrives). Resolves once that
   * delivery has reached the platform. Later deliveries of the same text pass.
   */
  holdDelivery?(text: string): Promise<void>;
  /**
   * Optional: the next delivery whose text is exactly `text` reaches the platform and shows
   * there, but the platform's answer to it never comes (the bot dies before it arrives).
   * Resolves once it shows.
   */
  holdAnswer?(text: string): Promise<void>;
  /**
   * Optional: the platform logs the bot's device out (removed on the phone). After the next
   * restart, `connected` links it again.
   */
  logOut?(): Promise<void>;
  /**
   * Optional (traits.privateChatsGrow): `person` joins `chat` as the platform lets them (the
   * owner invites them into the room and they join; the thread's next mails have them in Cc).
   * Resolves once the platform has it.
   */
  addMember?(chat: ChatRef, person: Person): Promise<void>;
  /** Optional, with addMember: `person` leaves `chat` again (leaves the room; the mails drop the Cc). */
  removeMember?(chat: ChatRef, person: Person): Promise<void>;
  /** The connection to the platform breaks and stays broken until `restoreConnection`. */
  loseConnection(): Promise<void>;
  restoreConnection(): Promise<void>;
  /** Stops the fake and everything the adapter started. */
  close(): Promise<void>;
}

/** The chat that the owner's private conversation is. */
export const ownerDm = (platform: FakePlatform): ChatRef => ({ kind: "dm", with: platform.person("owner") });
