// Pairing (DESIGN §10): a stranger who DMs the bot gets a short code; the owner approves it
// (`hearth pairing approve CODE`, or /approve CODE in their DM) and from then on that person
// has their own shared-scope DM session. Stored in <home>/pairing.json, written atomically.
//
// Strangers cost nothing: a sender is answered at most once an hour (whatever they send), holds
// at most one code, and a code is never renewed: once it expires unapproved, the same sender gets
// no new one for another hour. With at most a few codes per channel (maxPendingPairings, default 3), a few accounts cannot
// keep the slots to themselves. Who was answered when is kept in memory; after a restart the
// pending codes in pairing.json say when their senders were last answered.
import { channelIdSchema } from "../../channels/registry.ts";
import { randomInt } from "node:crypto";
import { z } from "zod";
import type { ChannelId } from "../../channels/channel.ts";
import { printable } from "../../channels/printable.ts";
import type { Logger } from "../../process/log.ts";
import { loadJsonFile, salvageArray, writeFileAtomic, type Salvaged, type StateVersions } from "../../state/storage.ts";

/** No 0/O, 1/I/L: codes get read aloud and retyped. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
export const CODE_LENGTH = 8;
export const CODE_TTL_MS = 60 * 60 * 1000;
/** Pending codes per channel, unless the channel's config says otherwise (maxPendingPairings). */
export const MAX_PENDING = 3;
/** A sender gets at most one pairing message per this long. */
export const ANSWER_INTERVAL_MS = 60 * 60 * 1000;
/** After a sender's code expired unapproved, how long before they may have a new one. */
export const RENEWAL_COOLDOWN_MS = 60 * 60 * 1000;
/** Senders remembered at most (a flood of accounts makes the store forget, never grow). */
const MAX_REMEMBERED = 10_000;

export interface PendingPairing {
  code: string;
  channel: ChannelId;
  userId: string;
  name: string;
  createdAt: number;
  /** The private chat they wrote in, where they are told once approved (Discord's is not their user id). */
  chatId?: string;
}

export interface ApprovedSender {
  channel: ChannelId;
  userId: string;
  name: string;
  approvedAt: number;
  /** See PendingPairing.chatId; absent for a code asked before it was recorded. */
  chatId?: string;
}

interface PairingFile {
  version: 1;
  pending: PendingPairing[];
  approved: ApprovedSender[];
}

const pendingSchema = z.looseObject({ code: z.string(), channel: channelIdSchema, userId: z.string(), name: z.string().transform(printable), createdAt: z.number() }) as z.ZodType<PendingPairing>;
const approvedSchema = z.looseObject({ channel: channelIdSchema, userId: z.string(), name: z.string().transform(printable), approvedAt: z.number() }) as z.ZodType<ApprovedSender>;
/** pairing.json as `#save` writes it. */
const pairingFileSchema: z.ZodType<PairingFile> = z.object({ version: z.literal(1), pending: z.array(pendingSchema), approved: z.array(approvedSchema) });

/** pairing.json's format versions: 0 is the file from before versions ({ pending, approved }). */
const PAIRING_VERSIONS: StateVersions = { current: 1, steps: [{ from: 0, name: "addVersion", apply: (raw) => raw }] };

/** Keeps every pending code and approved sender that validates on its own. */
function salvagePairing(raw: unknown): Salvaged<PairingFile> | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const pending = salvageArray(r.pending, "pending", pendingSchema);
  const approved = salvageArray(r.approved, "approved", approvedSchema);
  const dropped = [...pending.dropped, ...approved.dropped];
  if (r.version !== 1) dropped.push(`version: expected 1, found ${JSON.stringify(r.version)}`);
  return { value: { version: 1, pending: pending.value, approved: approved.value }, dropped };
}

export type PairingRequest =
  /** The sender's code, new or still pending: tell them. */
  | { type: "code"; code: string; isNew: boolean }
  /** The channel's limit of waiting codes is reached: tell them to try later. */
  | { type: "full" }
  /** Their code expired unapproved; a new one is possible from `until`. */
  | { type: "cooldown"; until: number }
  /** They were answered within the last hour: say nothing. */
  | { type: "silent" };

/** What the store remembers of one sender between requests. */
interface SenderMemory {
  answeredAt: number;
  /** When their latest code was created (it counts even after it expired). */
  codeAt?: number;
}

export class PairingStore {
  readonly #path: string;
  readonly #clock: () => number;
  #data: PairingFile;
  readonly #senders = new Map<string, SenderMemory>();

  private constructor(path: string, data: PairingFile, clock: () => number) {
    this.#path = path;
    this.#data = data;
    this.#clock = clock;
    // A pending code was sent when it was made: after a restart its sender still waits out the hour.
    for (const p of data.pending) this.#remember(`${p.channel}:${p.userId}`, { answeredAt: p.createdAt, codeAt: p.createdAt });
  }

  /**
   * Reads pairing.json; a missing file is empty. A damaged one is never overwritten: it is kept
   * as `pairing.json.damaged-<time>` (storage.ts) and the store starts with what validated.
   */
  static open(path: string, log: Logger, clock: () => number = Date.now): PairingStore {
    const loaded = loadJsonFile(path, { schema: pairingFileSchema, log, versions: PAIRING_VERSIONS, salvage: salvagePairing, now: clock() });
    return new PairingStore(path, loaded.status === "ok" ? loaded.value : { version: 1, pending: [], approved: [] }, clock);
  }

  /** Re-reads the file: the CLI may have approved someone while the daemon runs. */
  reload(log: Logger): void {
    this.#data = PairingStore.open(this.#path, log, this.#clock).#data;
  }

  isApproved(channel: ChannelId, userId: string): boolean {
    return this.#data.approved.some((a) => a.channel === channel && a.userId === userId);
  }

  /**
   * A stranger wrote (anything: text, a photo, a command). Decides what, if anything, to answer;
   * the caller sends nothing for "silent". A pending code is returned as is, never renewed.
   */
  request(channel: ChannelId, userId: string, name: string, maxPending = MAX_PENDING, chatId?: string): PairingRequest {
    this.#expire();
    const now = this.#clock();
    const key = `${channel}:${userId}`;
    const memory = this.#senders.get(key);
    if (memory && now - memory.answeredAt < ANSWER_INTERVAL_MS) return { type: "silent" };
    this.#remember(key, { ...memory, answeredAt: now });

    const existing = this.#data.pending.find((p) => p.channel === channel && p.userId === userId);
    if (existing) return { type: "code", code: existing.code, isNew: false };
    const renewableAt = memory?.codeAt !== undefined ? memory.codeAt + CODE_TTL_MS + RENEWAL_COOLDOWN_MS : 0;
    if (now < renewableAt) return { type: "cooldown", until: renewableAt };
    if (this.#data.pending.filter((p) => p.channel === channel).length >= maxPending) return { type: "full" };
    const code = this.#newCode();
    this.#data.pending.push({ code, channel, userId, name: printable(name), createdAt: now, ...(chatId ? { chatId } : {}) });
    this.#remember(key, { answeredAt: now, codeAt: now });
    this.#save();
    return { type: "code", code, isNew: true };
  }

  /** Approves a pending code (case and spaces ignored); null when no such live code exists. */
  approve(code: string): ApprovedSender | null {
    this.#expire();
    const wanted = code.replace(/[\s-]/g, "").toUpperCase();
    const i = this.#data.pending.findIndex((p) => p.code === wanted);
    if (i === -1) return null;
    const [p] = this.#data.pending.splice(i, 1);
    const approved: ApprovedSender = { channel: p!.channel, userId: p!.userId, name: p!.name, approvedAt: this.#clock(), ...(p!.chatId ? { chatId: p!.chatId } : {}) };
    this.#data.approved = this.#data.approved.filter((a) => !(a.channel === approved.channel && a.userId === approved.userId));
    this.#data.approved.push(approved);
    this.#save();
    return approved;
  }

  /**
   * Drops a pending code unapproved (case and spaces ignored); null when no such live code
   * exists. The sender is not told, and waits out the cooldown before a new code, as if it expired.
   */
  deny(code: string): PendingPairing | null {
    this.#expire();
    const wanted = code.replace(/[\s-]/g, "").toUpperCase();
    const i = this.#data.pending.findIndex((p) => p.code === wanted);
    if (i === -1) return null;
    const [p] = this.#data.pending.splice(i, 1);
    this.#save();
    return p!;
  }

  /** Removes an approved sender; false when there was none. */
  revoke(channel: ChannelId, userId: string): boolean {
    const before = this.#data.approved.length;
    this.#data.approved = this.#data.approved.filter((a) => !(a.channel === channel && a.userId === userId));
    if (this.#data.approved.length === before) return false;
    this.#save();
    return true;
  }

  list(): { pending: PendingPairing[]; approved: ApprovedSender[] } {
    this.#expire();
    return { pending: [...this.#data.pending], approved: [...this.#data.approved] };
  }

  #expire(): void {
    const now = this.#clock();
    const live = this.#data.pending.filter((p) => now - p.createdAt < CODE_TTL_MS);
    if (live.length !== this.#data.pending.length) {
      // Codes from before a restart expire here too: their senders still wait before a new one.
      for (const p of this.#data.pending) {
        if (live.includes(p)) continue;
        const key = `${p.channel}:${p.userId}`;
        const memory = this.#senders.get(key);
        if ((memory?.codeAt ?? -Infinity) < p.createdAt) this.#remember(key, { answeredAt: memory?.answeredAt ?? p.createdAt, codeAt: p.createdAt });
      }
      this.#data.pending = live;
      this.#save();
    }
  }

  #remember(key: string, memory: SenderMemory): void {
    if (!this.#senders.has(key) && this.#senders.size >= MAX_REMEMBERED) this.#forgetOld();
    this.#senders.set(key, memory);
  }

  /** Drops senders nothing depends on any more; if all still matter, the oldest half. */
  #forgetOld(): void {
    const now = this.#clock();
    const horizon = CODE_TTL_MS + RENEWAL_COOLDOWN_MS;
    for (const [key, m] of this.#senders) {
      if (now - m.answeredAt >= ANSWER_INTERVAL_MS && (m.codeAt === undefined || now - m.codeAt >= horizon)) this.#senders.delete(key);
    }
    if (this.#senders.size < MAX_REMEMBERED) return;
    let drop = Math.floor(this.#senders.size / 2);
    for (const key of this.#senders.keys()) {
      if (drop-- <= 0) break;
      this.#senders.delete(key);
    }
  }

  #newCode(): string {
    for (;;) {
      const code = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
      if (!this.#data.pending.some((p) => p.code === code)) return code;
    }
  }

  #save(): void {
    writeFileAtomic(this.#path, `${JSON.stringify(this.#data, null, 1)}\n`);
  }
}
