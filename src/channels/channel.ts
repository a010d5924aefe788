// The contract between the gateway and a chat platform (DESIGN §3). Channels never import the
// agent; the gateway turns agent events into ReplySink calls.

/** A channel's id ("telegram", "discord", …): a plain string, checked against the registry where config and state are read (registry.ts `channelIdSchema`), so this contract imports no platform. */
export type ChannelId = string;
import type { Logger } from "../process/log.ts";

export interface InboundMessage {
  /** Unique per channel; with `channel` it is the dedupe key. */
  id: string;
  channel: ChannelId;
  chat: InboundChat;
  sender: { id: string; name: string; isOwner: boolean };
  text: string;
  /** A DM, an @mention, a reply to the bot, or the configured name pattern. */
  addressed: boolean;
  /**
   * The message this one replies to (a quote, a mail's In-Reply-To). `id` names it as the channel
   * names the messages it sends (`SendReceipt.messageIds`), so a reply to one of Hearth's
   * questions names that question (channels/answers.ts).
   */
  replyTo?: { id: string; text?: string; fromBot: boolean };
  /**
   * Set when the message held only what the channel cannot pass on (a photo, a sticker); `text`
   * is then empty. The note tells the sender so; the gateway sends it, without a model call, only
   * where it would answer the sender anyway.
   */
  unreadableNote?: string;
  /**
   * Files that came with the message, not yet downloaded. The gateway downloads them after it
   * decided to accept the message and before the inbox records it; never persisted.
   */
  attachments?: Attachment[];
  receivedAt: number;
  /**
   * Set when the message carries content its sender did not write, whatever the sender (a mail's
   * body, which may be a forward): named as the run's taint ("an email"), like a web page read.
   */
  outside?: string;
  /** Platform data the channel needs to answer (reply references); JSON-serialisable, opaque to the gateway. */
  raw?: unknown;
}

/**
 * The chat a message came in. `type` is what the platform calls it: `dm` its direct conversation
 * with the bot (a Telegram private chat, a Slack or Discord DM, a Signal or WhatsApp chat with one
 * person, a Matrix room Hearth takes as direct, a mail thread), `group` anything else. Whether it
 * is private is not the adapter's to say: the gateway decides it on every message from `members`
 * (gateway/access/audience.ts), so a `dm` must report them.
 */
export type InboundChat = {
  id: string;
  threadId?: string;
  title?: string;
  /** Other ids the chat belongs to (a Discord guild, a thread's parent), matched by group allowlists. */
  scopeIds?: string[];
} & ({ type: "dm"; members: ChatMembers } | { type: "group"; members?: ChatMembers });

/**
 * Who can read a chat besides the bot when the message came, as the platform says at that moment:
 * their ids, the sender's among them (a platform's one-to-one chat: its one person; a Matrix
 * room: its joined and invited members; a mail: its From, To and Cc but Hearth's own address), at
 * most 100 of them. "unknown" when the adapter cannot tell, which the gateway takes as shared.
 */
export type ChatMembers = readonly string[] | "unknown";

/** A file on the platform. `video` is described so the gateway can say it is not supported yet. */
export interface Attachment {
  kind: "image" | "document" | "audio" | "video";
  /** The sender's file name, or a made-up one (`photo.jpg`). */
  name: string;
  /** As the platform states it; may be empty or wrong (the gateway checks the bytes). */
  mime: string;
  /** As the platform states it, when it does. */
  size?: number;
  /** A recording's length in seconds as the platform states it (a voice note's `duration`). */
  durationSeconds?: number;
  /**
   * Downloads the file from the platform's own file endpoint (never another address). Rejects
   * with a `TooLargeError`-like error (`tooLarge: true`) as soon as more than `maxBytes` would be
   * read, without reading further, and with any other error when the download failed.
   */
  fetch(maxBytes: number, signal: AbortSignal): Promise<Uint8Array>;
}

/** A file to send (send_file): an absolute path the gateway checked against the scope. */
export interface OutboundFile {
  /** Where it came from (for messages); the channel sends `data`, never reads the path. */
  file: string;
  data: Uint8Array;
  name: string;
  mime: string;
  asPhoto: boolean;
  /** A spoken answer: Telegram sends it as a voice message (OGG/Opus); others as an audio file. */
  voice?: boolean;
  caption?: string;
}

/** What the bot is busy with, as a chat shows it: taking in a message's files, or sending one. */
export type ChatActivity = "typing" | "upload_photo" | "upload_document";

/** Where a proactive message (cron, heartbeat, a notice) goes. */
export interface DeliveryTarget {
  channel: ChannelId;
  chatId: string;
  threadId?: string;
}

/**
 * How the run behind a reply ended; channels may show it (the terminal maps it to an exit code).
 * `kept`: the message could not be answered now (a full disk) and stays in the inbox; the text is
 * a notice, and the answer that follows later takes over the same chat messages.
 */
export type ReplyOutcome = "answered" | "failed" | "stopped" | "kept";

/**
 * One reply, rendered as the channel sees fit. Calls arrive in run order; after `finish` or
 * `fail` no other call is made. `finish` and `fail` deliver exactly once and resolve when the
 * platform has the final text (or reject when it could not be delivered at all).
 */
export interface ReplySink {
  /**
   * Optional: called once, before any other call, with the id of the run this reply is attached
   * to. Replies to messages that joined the same run (steering) get the same id, so a client that
   * shows every reply itself (the terminal) can show that run once.
   */
  joinedRun?(runId: string): void;
  /** `notice`: Hearth's own line (a model error, a limit), which a channel may show apart from the answer. */
  textDelta(text: string, notice?: boolean): void;
  /** The text shown so far is replaced by `text` (a retried model stream said something else). */
  textReset(text: string): void;
  toolStarted(name: string, summary: string): void;
  toolFinished(name: string, ok: boolean): void;
  /**
   * Optional: the model failed and is asked again; `text` says why and when ("Could not reach the
   * model API at … (ECONNREFUSED). Trying again in 2 s…"). It names addresses: only for a chat
   * that is the owner's alone (the terminal shows it, so a model that is down is not silence).
   */
  modelRetrying?(text: string): void;
  /**
   * Optional: the run's text is complete and finish or fail follows. A streaming reply shows no
   * more previews, so a complete answer is first shown by the final delivery (recorded first).
   */
  textComplete?(): void;
  /**
   * Optional: the run stopped at its turn cap (agent.maxTurns), not at an answer; its text ends
   * with a notice saying so. Called once, before finish.
   */
  turnCapReached?(): void;
  /** `finalText` is the whole reply, notices included. */
  finish(finalText: string, outcome?: ReplyOutcome): Promise<void>;
  /** The run produced no usable reply; `message` says why (it may follow a partial preview). */
  fail(message: string): Promise<void>;
}

/**
 * A sink around `sink` that answers the calls in `own` itself and passes every other one on, an
 * optional one only where `sink` has it. Delegated call by call, not spread: a channel's sink may
 * keep its methods on a class.
 */
export function relaySink(sink: ReplySink, own: Partial<ReplySink>): ReplySink {
  return {
    ...(sink.joinedRun ? { joinedRun: (runId: string) => sink.joinedRun!(runId) } : {}),
    textDelta: (text, notice) => sink.textDelta(text, notice),
    textReset: (text) => sink.textReset(text),
    toolStarted: (name, summary) => sink.toolStarted(name, summary),
    toolFinished: (name, ok) => sink.toolFinished(name, ok),
    ...(sink.modelRetrying ? { modelRetrying: (text: string) => sink.modelRetrying!(text) } : {}),
    ...(sink.textComplete ? { textComplete: () => sink.textComplete!() } : {}),
    ...(sink.turnCapReached ? { turnCapReached: () => sink.turnCapReached!() } : {}),
    finish: (text, outcome) => sink.finish(text, outcome),
    fail: (message) => sink.fail(message),
    ...own,
  };
}

/**
 * A reply's durable memory, kept by the gateway's outbox, for replies that must survive a crash
 * (answers to inbox messages). The channel reports each message it creates for the reply the
 * moment the platform returns its id; a reply opened again after a restart continues in the
 * messages it already had instead of leaving them stale beside a new one.
 */
export interface ReplyJournal {
  /** Stable across restarts for this reply (Discord derives its idempotency nonces from it). */
  readonly key: string;
  /** Ids of the messages the reply had before a restart, by position (0: the preview, which becomes the first part). */
  readonly messageIds: ReadonlyArray<string | undefined>;
  /**
   * The reply's message was still open when the daemon started: a message of the reply may be
   * on the platform without its id in `messageIds` (created in the instant before a crash let it
   * be recorded). A platform that can find its messages again looks before creating one.
   */
  readonly recovered?: boolean;
  /**
   * Message `index` of the reply now exists on the platform with `id`. Synchronous: the record
   * is on disk when it returns. Must not throw.
   */
  messageCreated(index: number, id: string): void;
}

/** A platform linked as a device (WhatsApp), not linked yet: what the owner scans or types on the phone. */
export type DeviceLink = { how: "qr"; qr: string } | { how: "code"; code: string };

export type ChannelStatus =
  | { state: "starting"; link?: DeviceLink }
  | { state: "running"; detail?: string }
  | { state: "reconnecting"; detail: string }
  | { state: "failed"; reason: string }
  | { state: "stopped" };

/**
 * A command as a platform's menu shows it; the gateway derives these from its one command table
 * (gateway/commands.ts) and hands them to the channels that show menus.
 */
export interface MenuCommand {
  /** Lowercase, as typed after the slash. */
  name: string;
  description: string;
  /** Its one optional text argument, for platforms that ask for arguments apart (Discord's slash options). */
  option?: {
    name: string;
    description: string;
    /** Put before the value in the command's text ("raise " makes `/budget raise 5`). */
    prefix?: string;
  };
}

/**
 * A command the platform delivered as a command rather than as a chat message (a Discord slash
 * command). `message` describes it the way the typed command would be described: its text
 * ("/status", "/budget raise 5"), chat and sender, addressed.
 */
export interface PlatformCommand {
  message: InboundMessage;
  /**
   * Answers it where only its sender sees it (Discord: an ephemeral response). Call it once;
   * it resolves once the platform has the answer and rejects when it could not be delivered.
   */
  answer(text: string): Promise<void>;
}

/** About a proactive message: what sent it, and whether it may wait in a mailbox. */
export interface SendMeta {
  /** `cron job "Stretch" (a1b2c3d4)`, `heartbeat`, `Hearth`. */
  from: string;
  /** False: reject rather than keep it for later (the caller has somewhere else to send it). Default true. */
  keep?: boolean;
  /**
   * The message this one answers (a whole answer sent by fallbacks.ts's FinalReply, in a group):
   * a platform that quotes (Signal, WhatsApp) quotes it; others ignore it.
   */
  answering?: InboundMessage;
  /**
   * Stable for this message across restarts (FinalReply: the reply's journal key and the part's
   * index). A platform that lets the sender choose a message's id (WhatsApp) derives it from this,
   * so a part sent again after a crash is the same message to the recipient, not a second one.
   */
  messageKey?: string;
}

/**
 * How a proactive message went: shown in the chat, or kept until a client of the chat connects.
 * `messageIds`: the platform's names of the messages it was sent as, in order, in the form
 * `InboundMessage.replyTo.id` names a message (a reply quoting one of them names it); absent
 * where the channel does not say them.
 */
export type SendReceipt = { type: "delivered"; messageIds?: string[] } | { type: "kept" };

/** A button under a question (Channel.askChoices). `id`: a few letters, unique within the question. */
export interface Choice {
  id: string;
  label: string;
}

/**
 * What answering a question decides: `approval`, whether a tool call runs; `access`, who may talk
 * to Hearth (a pairing request); `setting`, the owner's own settings (`/model`, a budget raise);
 * `question`, a tool's question to the person its run answers.
 */
export type QuestionKind = "approval" | "access" | "setting" | "question";

/**
 * A question with buttons. `key` names it across presses and restarts; it travels inside each
 * button (Telegram allows 64 bytes of callback data), so keep it short: [A-Za-z0-9_-], ≤ 24.
 * Where a platform has no buttons, an answer in words must name the question (a quoted reply, a
 * reaction, a mail's In-Reply-To); a bare number is taken only when it is the one question open
 * in its chat, and never for an `access` question (channels/answers.ts).
 */
export interface ChoiceQuestion {
  key: string;
  kind: QuestionKind;
  text: string;
  choices: Choice[];
}

/** Someone pressed a button of question `key`. `isOwner` is the channel's reading of its ownerIds. */
export interface ChoicePress {
  key: string;
  choiceId: string;
  by: { id: string; name: string; isOwner: boolean };
  channel: ChannelId;
}

/**
 * Handles a press. Resolves with a short answer shown to the presser alone (Telegram's
 * callback answer, Discord's ephemeral reply); must not throw.
 */
export type ChoiceHandler = (press: ChoicePress) => Promise<string>;

export interface Channel {
  readonly id: ChannelId;
  /**
   * Connects and starts delivering messages to `onMessage`. Resolves once connected, or rejects
   * with a reason that says what to fix (a bad token). A rejection whose error has
   * `retryable: true` is temporary (network, timeout) and the gateway calls `start` again later;
   * any other is final until a restart. `onMessage` must not throw; it may return a promise that
   * settles once the message is on disk (a channel that can wait before acknowledging does).
   * `onCommand` gets the platform's own commands (a channel without them never calls it); it
   * must not throw and answers each command itself, through `PlatformCommand.answer`.
   */
  start(onMessage: (m: InboundMessage) => void | Promise<void>, onCommand?: (c: PlatformCommand) => void): Promise<void>;
  /** Stops receiving; pending sends may finish. Safe to call twice. */
  stop(): Promise<void>;
  /** `journal`: see ReplyJournal; a channel that cannot edit messages (the terminal) ignores it. */
  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink;
  /**
   * A proactive message; rejects when it could not be delivered. `meta.from` names what sent it
   * (a cron job, the heartbeat). A channel that can keep a message for later (the terminal's
   * mailbox) resolves with `{ type: "kept" }`; anything else counts as delivered.
   */
  send(to: DeliveryTarget, text: string, meta?: SendMeta): Promise<SendReceipt | void>;
  /**
   * Optional: sends a file to the chat of `to` (a photo when `asPhoto`, else a document) and
   * resolves with the platform's message id; rejects when the platform refused it. A channel
   * without it (the terminal) gets the file's path as text instead.
   */
  sendFile?(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string>;
  /**
   * Optional: a short line about message `to` that is not its answer (what a voice note was
   * heard as). A channel without it gets the line as a message of its own; the terminal shows
   * it beside the answer it is waiting for, without ending it.
   */
  sendNote?(to: InboundMessage, text: string): Promise<void>;
  /**
   * Optional: shows in the chat of `to` that the bot is busy (Telegram's chat action, Discord's
   * typing indicator) for a few seconds; the caller refreshes it while the work lasts. Rejects
   * when the chat cannot show it (the caller then stops asking).
   */
  showActivity?(to: InboundMessage | DeliveryTarget, activity: ChatActivity): Promise<void>;
  /**
   * Optional: sends `question` with one button per choice to the chat of `to`; resolves with the
   * message's platform id, rejects when it could not be shown. Presses go to the `onChoice`
   * handler. A channel without it cannot ask (the gateway asks in the owner's chat instead).
   */
  askChoices?(to: DeliveryTarget, question: ChoiceQuestion): Promise<string>;
  /** Optional, with askChoices: the question `messageId` now shows `text` and no buttons. */
  settleChoices?(to: DeliveryTarget, messageId: string, text: string): Promise<void>;
  /** Optional, with askChoices: where presses go; set before `start`. */
  onChoice?(handler: ChoiceHandler): void;
  status(): ChannelStatus;
}

/**
 * Logs a channel's move to another state as `<platform>.state`: a reconnect as a warning, a
 * failure as an error, the rest as information. Nothing when the state is the same.
 */
export function logStateChange(log: Logger, platform: string, prev: ChannelStatus, next: ChannelStatus): void {
  if (prev.state === next.state) return;
  const event = `${platform}.state`;
  switch (next.state) {
    case "starting":
    case "stopped":
      return log.info(event, { state: next.state });
    case "running":
      return log.info(event, { state: next.state, ...(next.detail ? { detail: next.detail } : {}) });
    case "reconnecting":
      return log.warn(event, { state: next.state, detail: next.detail });
    case "failed":
      return log.error(event, { state: next.state, reason: next.reason });
    default:
      next satisfies never;
  }
}

/** True when a `start` failure is temporary (see Channel.start). */
export const isRetryableStartError = (err: unknown): boolean =>
  typeof err === "object" && err !== null && (err as { retryable?: unknown }).retryable === true;

export const isDeliveryTarget = (to: InboundMessage | DeliveryTarget): to is DeliveryTarget => "chatId" in to;
