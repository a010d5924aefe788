// The durable inbox (DESIGN §11): an accepted message is on disk before its run starts and is
// marked done once its reply was handed to the channel. After a crash, what is not done is
// queued again — once: a message that was already replayed and still is not done is given up
// (a poison message must not crash the daemon in a loop).
import { appendFileSync } from "node:fs";
import type { InboundMessage } from "../channels/channel.ts";
import type { Logger } from "../log.ts";
import { readJsonLines, writeFileAtomic } from "../storage.ts";

export interface InboxEntry {
  /** `<channel>:<message id>`: the dedupe key. */
  id: string;
  sessionKey: string;
  message: InboundMessage;
  acceptedAt: number;
  /** Chat context captured when it was accepted (recent group messages). */
  preface?: string;
  /** How many times a start re-queued it. */
  replays: number;
}

type InboxRecord =
  | { type: "accepted"; entry: InboxEntry }
  | { type: "done"; id: string; ts: number }
  | { type: "replayed"; id: string; ts: number }
  | { type: "abandoned"; id: string; reason: string; ts: number }
  /** Kept across compaction so a re-delivered platform update is still recognised. */
  | { type: "seen"; id: string };

/** Done ids remembered for dedupe after compaction (platforms re-deliver recent updates only). */
const SEEN_LIMIT = 5_000;

export const inboxId = (m: Pick<InboundMessage, "channel" | "id">): string => `${m.channel}:${m.id}`;

export interface InboxRecovery {
  /** Entries to run again, oldest first (their `replays` already counted). */
  replay: InboxEntry[];
  /** Entries given up because they were replayed before and still not finished. */
  abandoned: InboxEntry[];
}

export class Inbox {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #open = new Map<string, InboxEntry>();
  readonly #seen = new Set<string>();

  private constructor(path: string, log: Logger, clock: () => number) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
  }

  /**
   * Opens the inbox, compacts the file (only open entries and recent ids survive) and returns
   * what must be run again. A torn or corrupt line is skipped and reported.
   */
  static open(path: string, log: Logger, clock: () => number = Date.now): { inbox: Inbox; recovery: InboxRecovery } {
    const inbox = new Inbox(path, log, clock);
    const records = inbox.#read();
    const open = new Map<string, InboxEntry>();
    const seen: string[] = [];
    for (const r of records) {
      switch (r.type) {
        case "accepted":
          open.set(r.entry.id, { ...r.entry });
          break;
        case "replayed": {
          const e = open.get(r.id);
          if (e) e.replays++;
          break;
        }
        case "done":
        case "abandoned":
        case "seen":
          open.delete(r.id);
          seen.push(r.id);
          break;
        default:
          r satisfies never;
      }
    }
    const recovery: InboxRecovery = { replay: [], abandoned: [] };
    for (const e of open.values()) (e.replays >= 1 ? recovery.abandoned : recovery.replay).push(e);
    for (const id of seen.slice(-SEEN_LIMIT)) inbox.#seen.add(id);
    for (const e of recovery.abandoned) inbox.#seen.add(e.id);
    for (const e of recovery.replay) {
      e.replays++;
      inbox.#open.set(e.id, e);
    }
    inbox.#rewrite(recovery);
    return { inbox, recovery };
  }

  /** True when this platform message was accepted before (dedupe). */
  has(id: string): boolean {
    return this.#open.has(id) || this.#seen.has(id);
  }

  /** Records an accepted message; returns false (and records nothing) for a duplicate. */
  accept(message: InboundMessage, sessionKey: string, preface?: string): InboxEntry | null {
    const id = inboxId(message);
    if (this.has(id)) return null;
    const entry: InboxEntry = { id, sessionKey, message, acceptedAt: this.#clock(), replays: 0, ...(preface ? { preface } : {}) };
    this.#append({ type: "accepted", entry });
    this.#open.set(id, entry);
    return entry;
  }

  markDone(id: string): void {
    if (!this.#open.delete(id)) return;
    this.#seen.add(id);
    this.#append({ type: "done", id, ts: this.#clock() });
  }

  /** Entries not yet done, oldest first. */
  pending(): InboxEntry[] {
    return [...this.#open.values()];
  }

  #append(r: InboxRecord): void {
    appendFileSync(this.#path, `${JSON.stringify(r)}\n`);
  }

  #read(): InboxRecord[] {
    const { values, badLines } = readJsonLines<InboxRecord>(this.#path);
    if (badLines.length > 0) this.#log.warn("inbox.bad_lines", { lines: badLines });
    return values;
  }

  /** Replaces the file with the compact state, atomically. */
  #rewrite(recovery: InboxRecovery): void {
    const now = this.#clock();
    const lines: InboxRecord[] = [...this.#seen].map((id) => ({ type: "seen", id }) as const);
    for (const e of this.#open.values()) {
      lines.push({ type: "accepted", entry: { ...e, replays: e.replays - 1 } });
      lines.push({ type: "replayed", id: e.id, ts: now });
    }
    for (const e of recovery.abandoned) {
      this.#log.error("inbox.abandoned", { id: e.id, session: e.sessionKey, reason: "still unanswered after a replay" });
    }
    writeFileAtomic(this.#path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  }
}
