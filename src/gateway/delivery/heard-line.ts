// "🎤 heard: …" — what Hearth understood of the owner's voice notes, shown before the answer so
// a misheard note is caught at once. Exactly once, like the answer: the line is kept in the
// inbox entry (entry.heard) and recorded in the outbox under the entry's reply the moment the
// platform has it. A crash before that record makes the replayed (or re-delivered) entry send
// it; after it, never again. The answer's reply waits for the line, so it always comes first.
import type { InboundMessage, ReplyJournal, ReplySink } from "../../channels/channel.ts";
import type { Logger } from "../../process/log.ts";
import type { ChannelRegistry } from "./channel-registry.ts";

/**
 * What delivering a reply's extras (a heard line, files) needs from the gateway; the gateway
 * context has all of it.
 */
export interface DeliveryDeps {
  /**
   * The outbox's once-per-key send (Outbox.sendFileOnce): runs `send` unless one of `keys` is
   * recorded for reply `replyId`, and records the platform id it returns.
   */
  outbox: { sendFileOnce(replyId: string, keys: string[], send: () => Promise<string>): Promise<"sent" | "already"> };
  channels: ChannelRegistry;
  log: Logger;
}

/** The part of an inbox entry a heard line concerns: its id, its message, what was heard. */
export interface HeardEntry {
  id: string;
  message: InboundMessage;
  heard?: string[];
}

/** The line the owner sees for the transcripts of one message. */
export const heardText = (heard: readonly string[]): string => heard.map((t) => `🎤 heard: ${t}`).join("\n");

/** One send per entry in this process: the lane and the reply both ask, and must not both send. */
const announcing = new WeakMap<HeardEntry, Promise<void>>();

/**
 * Sends the entry's heard line unless the outbox says it went out; a second call while (or
 * after) the first runs gets the first's promise. Never rejects: a line that cannot be sent is
 * logged (the answer matters more). Resolves at once for an entry without one.
 */
export function announceHeard(ctx: DeliveryDeps, entry: HeardEntry): Promise<void> {
  if (!entry.heard?.length) return Promise.resolve();
  let sending = announcing.get(entry);
  if (!sending) {
    sending = sendHeard(ctx, entry, entry.heard);
    announcing.set(entry, sending);
  }
  return sending;
}

async function sendHeard(ctx: DeliveryDeps, entry: HeardEntry, heard: readonly string[]): Promise<void> {
  const text = heardText(heard);
  try {
    await ctx.outbox.sendFileOnce(entry.id, ["heard"], async () => {
      let id = "";
      const journal: ReplyJournal = {
        key: `${entry.id}:heard`,
        messageIds: [],
        messageCreated: (index, created) => {
          if (index === 0) id = created;
        },
      };
      // A note: the terminal shows it beside the answer it waits for; chats get a message of its own.
      await ctx.channels.note(entry.message, text, journal);
      return id;
    });
  } catch (err) {
    ctx.log.warn("media.heard_not_sent", { entry: entry.id, error: err });
  }
}

/**
 * `sink`, with every call held until `ready` settles and then passed on in order: the answer
 * never overtakes the heard line, even when the model is quicker than the platform.
 */
export function holdUntil(ready: Promise<void>, sink: ReplySink): ReplySink {
  let open = false;
  const held: Array<() => void> = [];
  void ready.finally(() => {
    open = true;
    for (const call of held.splice(0)) call();
  });
  const later = (call: () => void) => (open ? call() : void held.push(call));
  return {
    ...(sink.joinedRun ? { joinedRun: (runId: string) => later(() => sink.joinedRun!(runId)) } : {}),
    textDelta: (t, notice) => later(() => sink.textDelta(t, notice)),
    textReset: (t) => later(() => sink.textReset(t)),
    toolStarted: (n, s) => later(() => sink.toolStarted(n, s)),
    toolFinished: (n, ok) => later(() => sink.toolFinished(n, ok)),
    ...(sink.modelRetrying ? { modelRetrying: (t: string) => later(() => sink.modelRetrying!(t)) } : {}),
    ...(sink.textComplete ? { textComplete: () => later(() => sink.textComplete!()) } : {}),
    finish: async (text, outcome) => {
      await ready.catch(() => {});
      await new Promise<void>((resolve) => later(resolve));
      return sink.finish(text, outcome);
    },
    fail: async (message) => {
      await ready.catch(() => {});
      await new Promise<void>((resolve) => later(resolve));
      return sink.fail(message);
    },
  };
}
