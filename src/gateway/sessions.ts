// The session registry: what Hearth knows about each conversation besides its transcript
// (scope, last activity, context use, /queue override), today's token use, and the owner's
// most recently used chat. Persisted to sessions/index.json with atomic writes, read back
// through the validating loader: a damaged record costs that record, never the daemon.
import { channelIdSchema } from "../channels/registry.ts";
import { z } from "zod";
import { addUsage, emptyUsage, type Scope, type Usage } from "../agent/messages.ts";
import type { ChannelId, DeliveryTarget } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { checkValue, loadJsonFile, writeFileAtomic, type Salvaged } from "../state/storage.ts";
import { localDate } from "../memory/daily-log.ts";
import { queueModes, type QueueMode } from "../fields/config-fields.ts";
import { estimateCostUsd } from "../spending/pricing.ts";
import { CLI_TARGET } from "../scheduler/host.ts";

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
  /** The model chosen with /model; absent means model.name. */
  model?: string;
  /** `/voice on|off`: this chat's answers are always / never spoken; absent means voice.reply. */
  voice?: "on" | "off";
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

const count = z.number().finite().nonnegative();
const usageSchema = z.object({ inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheCreationTokens: count }) satisfies z.ZodType<Usage>;

const sessionRecordSchema: z.ZodType<SessionRecord> = z.looseObject({
  key: z.string().min(1),
  scope: z.enum(["main", "shared"]),
  createdAt: z.number(),
  lastActivityAt: z.number(),
  lastChannel: channelIdSchema.optional(),
  title: z.string().optional(),
  contextTokens: count,
  queueMode: z.enum(queueModes).optional(),
  model: z.string().min(1).optional(),
  voice: z.enum(["on", "off"]).optional(),
}) as z.ZodType<SessionRecord>;

const usageDaySchema: z.ZodType<UsageDay> = z.object({ date: z.string(), usage: usageSchema, costUsd: count, runs: count });

const ownerContactSchema = z.object({ channel: channelIdSchema, chatId: z.string(), threadId: z.string().optional(), at: z.number() }) as z.ZodType<DeliveryTarget & { at: number }>;

/** sessions/index.json as written by `flush`. */
const indexFileSchema: z.ZodType<IndexFile> = z.object({
  version: z.literal(1),
  sessions: z.record(z.string(), sessionRecordSchema),
  today: usageDaySchema,
  ownerContact: ownerContactSchema.optional(),
}) as z.ZodType<IndexFile>;

/** Keeps every part of an index that validates on its own; null when it is not an index at all. */
function salvageIndex(raw: unknown, fresh: IndexFile): Salvaged<IndexFile> | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const dropped: string[] = [];
  const value: IndexFile = { ...fresh, sessions: {} };
  if (r.version !== 1) dropped.push(`version: expected 1, found ${JSON.stringify(r.version)}`);
  if (typeof r.sessions === "object" && r.sessions !== null && !Array.isArray(r.sessions)) {
    for (const [key, rec] of Object.entries(r.sessions)) {
      const c = checkValue(rec, sessionRecordSchema);
      if (c.ok && c.value.key === key) value.sessions[key] = c.value;
      else dropped.push(`sessions[${JSON.stringify(key)}]: ${c.ok ? "its key does not match" : c.problem}`);
    }
  } else if (r.sessions !== undefined) dropped.push("sessions: not an object");
  const today = checkValue(r.today, usageDaySchema);
  if (today.ok) value.today = today.value;
  else if (r.today !== undefined) dropped.push(`today: ${today.problem}`);
  if (r.ownerContact !== undefined) {
    const contact = checkValue(r.ownerContact, ownerContactSchema);
    if (contact.ok) value.ownerContact = contact.value;
    else dropped.push(`ownerContact: ${contact.problem}`);
  }
  return { value, dropped };
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
    const fresh: IndexFile = { version: 1, sessions: {}, today: { date: localDate(clock(), timezone), usage: emptyUsage(), costUsd: 0, runs: 0 } };
    const loaded = loadJsonFile(path, { schema: indexFileSchema, log, versions: { current: 1, steps: [] }, salvage: (raw) => salvageIndex(raw, fresh), now: clock() });
    return new SessionStore(path, loaded.status === "ok" ? loaded.value : fresh, log, timezone, clock);
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

  /**
   * A setting the owner chose for a chat (/voice, /model, /queue): recorded like `touch`, and
   * written at once rather than within the half second the other updates wait, so a crash right
   * after the confirmation cannot take the choice back.
   */
  choose(key: string, scope: Scope, patch: Partial<Pick<SessionRecord, "voice" | "model" | "queueMode">>): SessionRecord {
    const rec = this.touch(key, scope, patch);
    this.flush();
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

  /** The owner's last chat is no longer theirs alone (someone joined it) and no other is known: the terminal until they write again. */
  forgetOwnerContact(): void {
    delete this.#data.ownerContact;
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
      // No fsync: rewritten after every run, and losing the last seconds of it costs nothing that matters.
      writeFileAtomic(this.#path, `${JSON.stringify(this.#data, null, 1)}\n`, 0o600, { sync: false });
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

/**
 * The owner's preferred chat: the one they last wrote from (the router records it), else the
 * terminal. Where the scheduler's, the approvals' and the owner's questions go by default.
 */
export function ownerTarget(sessions: Pick<SessionStore, "ownerContact">): DeliveryTarget {
  const c = sessions.ownerContact();
  return c ? { channel: c.channel, chatId: c.chatId, ...(c.threadId ? { threadId: c.threadId } : {}) } : CLI_TARGET;
}
