// The session registry: what Hearth knows about each conversation besides its transcript
// (scope, last activity, context use, /queue override), today's token use, and the owner's
// most recently used chat. Persisted to sessions/index.json with atomic writes.
import { readFileSync } from "node:fs";
import { addUsage, emptyUsage, type Scope, type Usage } from "../agent/messages.ts";
import type { ChannelId, DeliveryTarget } from "../channels/channel.ts";
import type { Logger } from "../log.ts";
import { writeFileAtomic } from "../storage.ts";
import { localDate } from "../memory/daily-log.ts";
import type { QueueMode } from "./config.ts";
import { estimateCostUsd } from "./cost.ts";

export interface SessionRecord {
  key: string;
  scope: Scope;
  createdAt: number;
  lastActivityAt: number;
  lastChannel?: ChannelId;
  title?: string;
  /** Tokens in the model's context at the last response (input + cache read + cache creation). */
  contextTokens: number;
  queueMode?: QueueMode;
}

export interface UsageDay {
  date: string;
  usage: Usage;
  costUsd: number;
  runs: number;
}

interface IndexFile {
  version: 1;
  sessions: Record<string, SessionRecord>;
  today: UsageDay;
  ownerContact?: DeliveryTarget & { at: number };
  /** When the owner last wrote to Hearth (any channel, the terminal too). */
  ownerMessageAt?: number;
}

export class SessionStore {
  readonly #path: string;
  readonly #log: Logger;
  readonly #timezone: string;
  readonly #clock: () => number;
  #data: IndexFile;
  #saveTimer: NodeJS.Timeout | null = null;

  private constructor(path: string, data: IndexFile, log: Logger, timezone: string, clock: () => number) {
    this.#path = path;
    this.#data = data;
    this.#log = log;
    this.#timezone = timezone;
    this.#clock = clock;
  }

  static open(path: string, log: Logger, timezone: string, clock: () => number = Date.now): SessionStore {
    let data: IndexFile = { version: 1, sessions: {}, today: { date: localDate(clock(), timezone), usage: emptyUsage(), costUsd: 0, runs: 0 } };
    try {
      const parsed = JSON.parse(readFileSync(path, "utf8")) as IndexFile;
      if (parsed?.version === 1 && parsed.sessions) data = { ...data, ...parsed };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") log.warn("sessions.index_unreadable", { path, error: err, action: "starting a fresh index" });
    }
    return new SessionStore(path, data, log, timezone, clock);
  }

  get(key: string): SessionRecord | undefined {
    return this.#data.sessions[key];
  }

  all(): SessionRecord[] {
    return Object.values(this.#data.sessions).sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  }

  /** Creates or updates a session record. */
  touch(key: string, scope: Scope, patch: Partial<Omit<SessionRecord, "key" | "scope">> = {}): SessionRecord {
    const now = this.#clock();
    const rec = this.#data.sessions[key] ?? { key, scope, createdAt: now, lastActivityAt: now, contextTokens: 0 };
    Object.assign(rec, patch, { lastActivityAt: patch.lastActivityAt ?? now });
    this.#data.sessions[key] = rec;
    this.#scheduleSave();
    return rec;
  }

  /** Adds one model response's usage to today's totals and to the session's context figure. */
  recordUsage(key: string, model: string, usage: Usage, contextTokens: number): void {
    const day = this.today();
    day.usage = addUsage(day.usage, usage);
    day.costUsd += estimateCostUsd(model, usage);
    const rec = this.#data.sessions[key];
    if (rec) rec.contextTokens = contextTokens;
    this.#scheduleSave();
  }

  countRun(): void {
    this.today().runs++;
    this.#scheduleSave();
  }

  /** Today's totals; a new day (in the owner's timezone) starts from zero. */
  today(): UsageDay {
    const date = localDate(this.#clock(), this.#timezone);
    if (this.#data.today.date !== date) this.#data.today = { date, usage: emptyUsage(), costUsd: 0, runs: 0 };
    return this.#data.today;
  }

  /** Where the owner last wrote from: cron "owner" deliveries and failure notices go there. */
  ownerContact(): (DeliveryTarget & { at: number }) | undefined {
    return this.#data.ownerContact;
  }

  setOwnerContact(target: DeliveryTarget): void {
    this.#data.ownerContact = { ...target, at: this.#clock() };
    this.#scheduleSave();
  }

  /** When the owner last wrote (the heartbeat pauses after a long silence); undefined when never. */
  ownerMessageAt(): number | undefined {
    return this.#data.ownerMessageAt;
  }

  noteOwnerMessage(): void {
    this.#data.ownerMessageAt = this.#clock();
    this.#scheduleSave();
  }

  flush(): void {
    if (this.#saveTimer) clearTimeout(this.#saveTimer);
    this.#saveTimer = null;
    try {
      writeFileAtomic(this.#path, `${JSON.stringify(this.#data, null, 1)}\n`);
    } catch (err) {
      this.#log.error("sessions.save_failed", { path: this.#path, error: err });
    }
  }

  #scheduleSave(): void {
    if (this.#saveTimer) return;
    this.#saveTimer = setTimeout(() => this.flush(), 500);
    this.#saveTimer.unref();
  }
}
