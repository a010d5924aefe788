// What a chat platform can do, as its descriptor states it. The channel-neutral code reads these
// to fall back in one place (no edits: the answer is sent when complete, in chunks; no buttons:
// numbered choices answered by a reply), and the conformance suite runs every scenario a
// channel's capabilities allow.

export interface ChannelCapabilities {
  /** Sent messages can be edited: an answer streams by editing its preview. */
  edits: boolean;
  /** Buttons under a message (approvals, pairing, `/model`); without them, numbered replies. */
  buttons: boolean;
  /** A reaction on the owner's message while the bot works (the 👀 sign). */
  reactions: boolean;
  /** Threads or topics, each a conversation of its own. */
  threads: boolean;
  /** Photos and documents the sender attaches reach the model. */
  filesIn: boolean;
  /** The bot can send a file (send_file, pictures in answers). */
  filesOut: boolean;
  /** Voice notes in (transcribed). */
  voiceIn: boolean;
  /** Spoken answers out. */
  voiceOut: boolean;
  /** The longest message the platform takes, in characters; longer answers are split. */
  maxMessageLength: number;
  /** Group chats, answered when the bot is addressed. */
  groups: boolean;
  /** People other than the owner can write to the bot (pairing, dmPolicy). */
  strangers: boolean;
}
