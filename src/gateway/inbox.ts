// The durable inbox (DESIGN §11): an accepted message is on disk (fsynced) before the platform
// hears that we have it, and stays open until its reply was delivered. After a crash, what is
// still open is picked up again by the gateway's recovery (recovery.ts), which also reads the
// outbox: a reply whose final text was recorded is delivered from the record, anything else
// runs again.
//
// Only attempts that started count: a `started` record is written when a run that answers the
// entry actually begins (the model is about to see it). An entry that waited behind another run
// when the daemon died has not started and is never given up for it. A started record also says
// whether the run was a trial (recovery.ts): the entry held alone, in a run that had the daemon
// to itself, after the daemon had been up long enough to count as stable. Only a trial that
// crashed proves the message itself is what crashes the daemon.
import { channelIdSchema } from "../channels/registry.ts";
import { z } from "zod";
import type { MediaRef } from "../agent/messages.ts";
import type { InboundMessage } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { appendRecord, readVersionedJsonLines, stampRecord, writeFileAtomic, type RecordVersions } from "../state/storage.ts";

/** The message as a channel delivered it (validation only: the record read is kept whole). */
export const InboundMessageSchema = z.object({
  id: z.string(),
  channel: channelIdSchema,
  chat: z.object({
    id: z.string(),
    type: z.enum(["dm", "group"]),
    threadId: z.string().optional(),
    title: z.string().optional(),
    scopeIds: z.array(z.string()).optional(),
  }),
  sender: z.object({ id: z.string(), name: z.string(), isOwner: z.boolean() }),
  text: z.string(),
  addressed: z.boolean(),
  replyTo: z.object({ id: z.string(), text: z.string().optional(), fromBot: z.boolean() }).optional(),
  receivedAt: z.number(),
  outside: z.string().optional(),
  raw: z.unknown().optional(),
});

export const InboxEntrySchema = z.object({
  /** `<channel>:<message id>`: the dedupe key. */
  id: z.string().min(1),
  sessionKey: z.string().min(1),
  message: InboundMessageSchema,
  acceptedAt: z.number(),
  /** Chat context captured when it was accepted (recent group messages). */
  preface: z.string().optional(),
  /** The message's attachments, stored when it was accepted (media-intake.ts). */
  media: z
    .array(z.object({ kind: z.enum(["image", "document", "text"]), path: z.string(), file: z.string(), mime: z.string(), name: z.string(), note: z.string().optional() }))
    .optional(),
  /** Transcripts of its voice notes the owner is shown ("🎤 heard: …"), once, before the answer. */
  heard: z.array(z.string()).optional(),
  /** The message was (or held) a voice note: `voice.reply: "auto"` answers it with a voice note too. */
  voiceNote: z.literal(true).optional(),
  /** Runs of it that started before the file was last compacted (absent: none). */
  attempts: z.number().int().nonnegative().optional(),
  /** Of those, trials: runs that held it alone after the daemon was stable (absent: none). */
  trials: z.number().int().nonnegative().optional(),
});

export const InboxRecordSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accepted"), entry: InboxEntrySchema }),
  /** A run answering the entry began: one attempt; `trial`: the run was a trial (see above). */
  z.object({ type: z.literal("started"), id: z.string(), ts: z.number(), trial: z.literal(true).optional() }),
  z.object({ type: z.literal("done"), id: z.string(), ts: z.number() }),
  z.object({ type: z.literal("abandoned"), id: z.string(), reason: z.string(), ts: z.number() }),
  /** Kept across compaction so a re-delivered platform update is still recognised. */
  z.object({ type: z.literal("seen"), id: z.string() }),
  /** Written by earlier versions on every start; it says nothing about attempts and is ignored. */
  z.object({ type: z.literal("replayed"), id: z.string(), ts: z.number().optional() }),
]);

export type InboxRecord = z.infer<typeof InboxRecordSchema>;

export interface InboxEntry {
  id: string;
  sessionKey: string;
  message: InboundMessage;
  acceptedAt: number;
  preface?: string;
  media?: MediaRef[];
  /** See InboxEntrySchema. */
  heard?: string[];
  /** See InboxEntrySchema. */
  voiceNote?: true;
  /** Runs of this entry that started, in this life and earlier ones. */
  attempts: number;
  /** Of those, trials: runs that held it alone, with the daemon to itself, after the daemon was stable. */
  trials: number;
}

/** Done ids remembered for dedupe after compaction (platforms re-deliver recent updates only). */
const SEEN_LIMIT = 5_000;
/** Appends after which the file is rewritten with only open entries and recent ids. */
const COMPACT_EVERY = 5_000;

export const inboxId = (m: Pick<InboundMessage, "channel" | "id">): string => `${m.channel}:${m.id}`;

const isRecord = (v: unknown): v is InboxRecord => InboxRecordSchema.safeParse(v).success;

/**
 * inbox.jsonl's record versions (state/versions.ts RecordVersions): a line without `"v"` is version
 * 1, the records above. A record a newer Hearth wrote stops the start instead of being skipped
 * (the compaction at open would drop it for good).
 */
export const INBOX_VERSIONS: RecordVersions = { current: 1, steps: [] };

const lineOf = (r: InboxRecord): string => `${JSON.stringify(stampRecord(r, INBOX_VERSIONS))}\n`;

export class Inbox {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #open = new Map<string, InboxEntry>();
  readonly #seen = new Set<string>();
  #appends = 0;

  private constructor(path: string, log: Logger, clock: () => number) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
  }

  /**
   * Opens the inbox and compacts the file (open entries and recent ids survive). Returns the
   * entries a crash left open, oldest first. A torn line or a record of the wrong shape is
   * skipped and logged with the file and line; it never stops the start. A record a newer Hearth
   * wrote throws NewerStateError before anything is rewritten (the start exits 2).
   */
  static open(path: string, log: Logger, clock: () => number = Date.now): { inbox: Inbox; pending: InboxEntry[] } {
    const inbox = new Inbox(path, log, clock);
    // The one validating loader: a wrong-shaped line is skipped and logged with the file and line;
    // an inbox that cannot be read at all is set aside as inbox.jsonl.damaged-<time>.
    const { values } = readVersionedJsonLines(path, isRecord, INBOX_VERSIONS, log);
    const seen: string[] = [];
    for (const r of values) {
      switch (r.type) {
        case "accepted": {
          const { attempts, trials, ...rest } = r.entry;
          inbox.#open.set(r.entry.id, { ...(rest as Omit<InboxEntry, "attempts" | "trials">), attempts: attempts ?? 0, trials: trials ?? 0 });
          break;
        }
        case "started": {
          const e = inbox.#open.get(r.id);
          if (e) {
            e.attempts++;
            if (r.trial) e.trials++;
          }
          break;
        }
        case "done":
        case "abandoned":
        case "seen":
          inbox.#open.delete(r.id);
          seen.push(r.id);
          break;
        case "replayed":
          break;
        default:
          r satisfies never;
      }
    }
    for (const id of seen.slice(-SEEN_LIMIT)) inbox.#seen.add(id);
    inbox.#rewrite();
    return { inbox, pending: inbox.pending() };
  }

  /** True when this platform message was accepted before (dedupe). */
  has(id: string): boolean {
    return this.#open.has(id) || this.#seen.has(id);
  }

  /**
   * Records an accepted message, on disk before this returns (the platform is told we have it
   * only afterwards). Returns null, and records nothing, for a duplicate.
   */
  accept(message: InboundMessage, sessionKey: string, preface?: string, media?: MediaRef[], heard?: string[], voiceNote = false): InboxEntry | null {
    const id = inboxId(message);
    if (this.has(id)) return null;
    // Attachments carry live download functions; what is kept of them is `media`.
    const { attachments: _live, ...kept } = message;
    const entry: InboxEntry = { id, sessionKey, message: kept, acceptedAt: this.#clock(), attempts: 0, trials: 0, ...(preface ? { preface } : {}), ...(media?.length ? { media } : {}), ...(heard?.length ? { heard } : {}), ...(voiceNote ? { voiceNote: true as const } : {}) };
    this.#append({ type: "accepted", entry }, true);
    this.#open.set(id, entry);
    return entry;
  }

  /**
   * A model request carrying the entry is about to go out; `trial`: the run is a trial (it
   * holds the entry alone, has the daemon to itself, and the daemon is stable). Unknown ids
   * (cron runs, the heartbeat) are ignored. Not fsynced: it is on the model request's path, and
   * losing it to a power cut costs at most one more attempt; a crash of the process does not
   * lose it.
   */
  markStarted(id: string, trial = false): void {
    const e = this.#open.get(id);
    if (!e) return;
    e.attempts++;
    if (trial) e.trials++;
    this.#log.debug("inbox.started", { id, attempts: e.attempts, trial });
    this.#append({ type: "started", id, ts: this.#clock(), ...(trial ? { trial: true as const } : {}) }, false);
  }

  markDone(id: string): void {
    if (!this.#open.delete(id)) return;
    this.#seen.add(id);
    this.#append({ type: "done", id, ts: this.#clock() }, false);
  }

  /** Gives the entry up (its notice was delivered); it is never run again. */
  markAbandoned(id: string, reason: string): void {
    const e = this.#open.get(id);
    if (!e) return;
    this.#open.delete(id);
    this.#seen.add(id);
    this.#log.error("inbox.abandoned", { id, session: e.sessionKey, attempts: e.attempts, reason });
    this.#append({ type: "abandoned", id, reason, ts: this.#clock() }, false);
  }

  get(id: string): InboxEntry | undefined {
    return this.#open.get(id);
  }

  /** Entries not yet done, oldest first. */
  pending(): InboxEntry[] {
    return [...this.#open.values()];
  }

  /**
   * `durable`: fsynced before returning. Closing records are not: when one is lost, the
   * outbox's record of the delivered reply closes the entry again on the next start.
   */
  #append(r: InboxRecord, durable: boolean): void {
    appendRecord(this.#path, lineOf(r), { durable });
    // A daemon that runs for months must not grow the file (or its dedupe memory) forever.
    if (++this.#appends >= COMPACT_EVERY) this.#rewrite();
  }

  /** Replaces the file with the compact state, atomically. */
  #rewrite(): void {
    this.#appends = 0;
    for (const id of this.#seen) {
      if (this.#seen.size <= SEEN_LIMIT) break;
      this.#seen.delete(id); // oldest first: a Set keeps insertion order
    }
    const lines: InboxRecord[] = [...this.#seen].map((id) => ({ type: "seen", id }) as const);
    for (const e of this.#open.values()) lines.push({ type: "accepted", entry: e });
    writeFileAtomic(this.#path, lines.map(lineOf).join(""));
  }
}
