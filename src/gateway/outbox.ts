// The outbox: what each reply to an inbox message has put on the platform, so that a crash
// never leaves a chat with a stale half-answer and never makes a finished run answer twice.
//
// A reply is named by the inbox id of the message that opened it; messages joined to it by
// steering (same chat, same run) are linked with a `joined` record. For each reply the outbox
// records, fsynced before anything acts on them:
//   - `message`: the platform id of each message the reply created, the moment it is known
//     (index 0 is the preview, which becomes the first part of the final text);
//   - `final`: the final text, before its delivery starts;
//   - `delivered`: the platform confirmed the final text (not fsynced: losing it only means an
//     idempotent re-delivery — an edit to the same text).
// After a crash (recovery.ts): a reply with a final record is delivered from the record, by
// editing the messages it recorded, and no model is called; one without is re-run, and its new
// answer takes over the recorded preview.
import { z } from "zod";
import { relaySink, type InboundMessage, type ReplyJournal, type ReplyOutcome, type ReplySink } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { appendRecord, readVersionedJsonLines, stampRecord, writeFileAtomic, type RecordVersions } from "../state/storage.ts";

export const OutboxRecordSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message"), reply: z.string().min(1), index: z.number().int().nonnegative(), id: z.string().min(1), ts: z.number() }),
  z.object({ type: z.literal("joined"), reply: z.string().min(1), entry: z.string().min(1) }),
  z.object({
    type: z.literal("final"),
    reply: z.string().min(1),
    /** finish(text, outcome), or fail(text) where text is the reason. */
    kind: z.enum(["finish", "fail"]),
    text: z.string(),
    outcome: z.enum(["answered", "failed", "stopped"]),
    ts: z.number(),
  }),
  z.object({ type: z.literal("delivered"), reply: z.string().min(1), ts: z.number() }),
  /**
   * Something the reply sent once beside its text, by its keys: a file (send_file: the tool call
   * id and file hash + caption; a markdown image: file hash + caption) or the "heard" line.
   */
  z.object({ type: z.literal("file"), reply: z.string().min(1), keys: z.array(z.string().min(1)), id: z.string(), ts: z.number() }),
]);

export type OutboxRecord = z.infer<typeof OutboxRecordSchema>;

export interface FinalRecord {
  kind: "finish" | "fail";
  text: string;
  /** "kept" is never recorded: see openReply. */
  outcome: Exclude<ReplyOutcome, "kept">;
}

/** What the outbox knows of one reply. */
export interface ReplyRecord {
  id: string;
  /** The inbox ids this reply answers: its opener first, then those joined to it. */
  entries: string[];
  messageIds: Array<string | undefined>;
  final?: FinalRecord;
  delivered: boolean;
  /** Keys of the files the reply sent (see sendFileOnce). */
  files: string[];
}

/** Appends after which the file is rewritten with only the open replies. */
export const COMPACT_EVERY = 5_000;

const isRecord = (v: unknown): v is OutboxRecord => OutboxRecordSchema.safeParse(v).success;

/**
 * outbox.jsonl's record versions (state/versions.ts RecordVersions): a line without `"v"` is version
 * 1, the records above. A record a newer Hearth wrote stops the start instead of being skipped
 * (the compaction at open would drop it for good).
 */
export const OUTBOX_VERSIONS: RecordVersions = { current: 1, steps: [] };

const lineOf = (r: OutboxRecord): string => `${JSON.stringify(stampRecord(r, OUTBOX_VERSIONS))}\n`;

export class Outbox {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #replies = new Map<string, ReplyRecord>();
  readonly #replyOfEntry = new Map<string, string>();
  /** Inbox ids open when the outbox was opened: their replies may have messages that were never recorded. */
  readonly #openAtStart: ReadonlySet<string>;
  #appends = 0;

  private constructor(path: string, log: Logger, clock: () => number, openAtStart: ReadonlySet<string>) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
    this.#openAtStart = openAtStart;
  }

  /**
   * Reads the outbox and compacts it: only replies that answer one of `openEntries` (inbox ids
   * still open) are kept. A torn line or a record of the wrong shape is skipped and logged; a
   * record a newer Hearth wrote throws NewerStateError before anything is rewritten.
   */
  static open(path: string, log: Logger, openEntries: ReadonlySet<string>, clock: () => number = Date.now): Outbox {
    const outbox = new Outbox(path, log, clock, new Set(openEntries));
    const { values } = readVersionedJsonLines(path, isRecord, OUTBOX_VERSIONS, log);
    for (const r of values) {
      switch (r.type) {
        case "message":
          outbox.#reply(r.reply).messageIds[r.index] = r.id;
          break;
        case "joined":
          outbox.#join(r.reply, r.entry);
          break;
        case "final":
          outbox.#reply(r.reply).final = { kind: r.kind, text: r.text, outcome: r.outcome };
          break;
        case "delivered":
          outbox.#reply(r.reply).delivered = true;
          break;
        case "file":
          outbox.#reply(r.reply).files.push(...r.keys);
          break;
        default:
          r satisfies never;
      }
    }
    for (const [id, reply] of outbox.#replies) {
      if (reply.entries.some((e) => openEntries.has(e))) continue;
      outbox.#replies.delete(id);
      for (const e of reply.entries) if (outbox.#replyOfEntry.get(e) === id) outbox.#replyOfEntry.delete(e);
    }
    outbox.#rewrite();
    return outbox;
  }

  /** The reply that answers inbox entry `entryId` (its own, or one it joined), if any was recorded. */
  replyOf(entryId: string): ReplyRecord | undefined {
    const id = this.#replyOfEntry.get(entryId);
    return id === undefined ? undefined : this.#replies.get(id);
  }

  /**
   * Inbox entry `entryId` is answered by its own reply from now on, not by one it joined before
   * (it runs again on its own after a crash: the other reply's final text does not answer it).
   * Recorded, fsynced, as the entry joining its own reply.
   */
  detach(entryId: string): void {
    const current = this.#replyOfEntry.get(entryId);
    if (current === undefined || current === entryId) return;
    this.#join(entryId, entryId);
    this.#append({ type: "joined", reply: entryId, entry: entryId }, true);
  }

  /** Inbox entry `entryId` is answered by reply `replyId` (steering joined it to that run). */
  recordJoined(replyId: string, entryId: string): void {
    if (this.#replyOfEntry.get(entryId) === replyId) return;
    this.#join(replyId, entryId);
    this.#append({ type: "joined", reply: replyId, entry: entryId }, true);
  }

  /**
   * Opens reply `replyId` through `open` with a journal, wrapped so that the final text is
   * recorded before it is delivered and the delivery after it succeeded. A reply recorded before
   * a restart continues in its messages.
   */
  openReply(replyId: string, open: (journal: ReplyJournal) => ReplySink): ReplySink {
    const reply = this.#reply(replyId);
    const journal: ReplyJournal = {
      key: replyId,
      messageIds: [...reply.messageIds],
      recovered: this.#openAtStart.has(replyId),
      messageCreated: (index, id) => {
        if (reply.messageIds[index] === id) return;
        reply.messageIds[index] = id;
        try {
          this.#append({ type: "message", reply: replyId, index, id, ts: this.#clock() }, true);
        } catch (error) {
          this.#log.error("outbox.write_failed", { reply: replyId, error });
        }
      },
    };
    const sink = open(journal);
    const deliver = async (final: FinalRecord, go: () => Promise<void>) => {
      this.#recordFinal(reply, final);
      await go();
      reply.delivered = true;
      this.#append({ type: "delivered", reply: replyId, ts: this.#clock() }, false);
      this.#forget(reply);
    };
    return relaySink(sink, {
      // A notice for a message kept for later (a full disk) is not the reply's final text: the
      // run that answers it later continues in the same messages, and a restart re-runs it.
      finish: (text, outcome = "answered") =>
        outcome === "kept" ? sink.finish(text, outcome) : deliver({ kind: "finish", text, outcome }, () => sink.finish(text, outcome)),
      fail: (message) => deliver({ kind: "fail", text: message, outcome: "failed" }, () => sink.fail(message)),
    });
  }

  /**
   * Delivers a reply from its final record (after a restart): the same text to the same
   * messages. Rejects when it could not be delivered.
   */
  redeliver(reply: ReplyRecord, to: InboundMessage, open: (to: InboundMessage, journal: ReplyJournal) => ReplySink): Promise<void> {
    const final = reply.final;
    if (!final) throw new Error(`outbox: reply ${reply.id} has no final text to deliver`);
    const sink = this.openReply(reply.id, (journal) => open(to, journal));
    return final.kind === "fail" ? sink.fail(final.text) : sink.finish(final.text, final.outcome);
  }

  /**
   * Sends a file for reply `replyId` unless one of `keys` was sent for it before (a replayed
   * run): `send` runs at most once per key, and its platform id is fsynced the moment it returns.
   * Same window as messages: a file the platform took in the instant before the record stays.
   */
  async sendFileOnce(replyId: string, keys: string[], send: () => Promise<string>): Promise<"sent" | "already"> {
    const reply = this.#reply(replyId);
    if (keys.some((k) => reply.files.includes(k))) return "already";
    const id = await send();
    reply.files.push(...keys);
    this.#append({ type: "file", reply: replyId, keys, id, ts: this.#clock() }, true);
    return "sent";
  }

  /**
   * The reply of inbox entry `entryId` will not be delivered from here (its entry is closing): it
   * leaves memory. A delivery that failed keeps its reply in memory until then, with the messages
   * it recorded, so it can be delivered again (held-replies.ts).
   */
  release(entryId: string): void {
    const reply = this.replyOf(entryId);
    if (reply) this.#forget(reply);
  }

  #recordFinal(reply: ReplyRecord, final: FinalRecord): void {
    const same = reply.final && reply.final.kind === final.kind && reply.final.text === final.text && reply.final.outcome === final.outcome;
    reply.final = final;
    if (same) return;
    this.#append({ type: "final", reply: reply.id, ...final, ts: this.#clock() }, true);
  }

  #reply(id: string): ReplyRecord {
    let reply = this.#replies.get(id);
    if (!reply) {
      reply = { id, entries: [id], messageIds: [], delivered: false, files: [] };
      this.#replies.set(id, reply);
      this.#replyOfEntry.set(id, id);
    }
    return reply;
  }

  /** A reply whose delivery ended is not needed in memory any more (the file keeps it until compaction). */
  #forget(reply: ReplyRecord): void {
    this.#replies.delete(reply.id);
    for (const e of reply.entries) if (this.#replyOfEntry.get(e) === reply.id) this.#replyOfEntry.delete(e);
  }

  #join(replyId: string, entryId: string): void {
    // An entry is answered by one reply: joining another takes it out of the one it was in.
    const before = this.#replyOfEntry.get(entryId);
    const previous = before === undefined || before === replyId ? undefined : this.#replies.get(before);
    if (previous && previous.id !== entryId) previous.entries = previous.entries.filter((e) => e !== entryId);
    const reply = this.#reply(replyId);
    if (!reply.entries.includes(entryId)) reply.entries.push(entryId);
    this.#replyOfEntry.set(entryId, replyId);
  }

  #append(r: OutboxRecord, durable: boolean): void {
    appendRecord(this.#path, lineOf(r), { durable });
    // A daemon that runs for months must not grow the file forever: what is in memory is the
    // whole open state, so the file can be replaced by it at any moment.
    if (++this.#appends >= COMPACT_EVERY) this.#rewrite();
  }

  #rewrite(): void {
    this.#appends = 0;
    const lines: OutboxRecord[] = [];
    const ts = this.#clock();
    for (const reply of this.#replies.values()) {
      for (const entry of reply.entries.slice(1)) lines.push({ type: "joined", reply: reply.id, entry });
      for (const [index, id] of reply.messageIds.entries()) if (id !== undefined) lines.push({ type: "message", reply: reply.id, index, id, ts });
      if (reply.final) lines.push({ type: "final", reply: reply.id, ...reply.final, ts });
      if (reply.delivered) lines.push({ type: "delivered", reply: reply.id, ts });
      if (reply.files.length > 0) lines.push({ type: "file", reply: reply.id, keys: reply.files, id: "", ts });
    }
    writeFileAtomic(this.#path, lines.map(lineOf).join(""));
  }
}
