// What a start does with the messages a crash (or a stop) left open in the inbox, using what
// the outbox recorded of their replies:
//   - the reply was delivered (only its closing inbox record was lost) → closed;
//   - the run had finished (a final text is recorded) → delivered from the record: the same
//     text into the same messages, with no model call and no tool run again;
//   - otherwise, the run had not finished: run again, unless two runs of it already started
//     (then the owner of the chat is told it was given up; the notice takes over the stale
//     preview). An entry that never reached the model is never given up for it.
import type { InboundMessage, ReplyJournal, ReplySink } from "../channels/channel.ts";
import type { Logger } from "../log.ts";
import type { Inbox, InboxEntry } from "./inbox.ts";
import type { Outbox, ReplyRecord } from "./outbox.ts";

/** Runs of one message that may start before it is given up. */
export const MAX_STARTED_ATTEMPTS = 2;

export const GIVEN_UP_TEXT = "Sorry — I could not answer this message: answering it failed twice. Please send it again if it still matters.";

export interface RecoveryPlan {
  /** Replies whose delivery was confirmed: their entries only need closing. */
  delivered: InboxEntry[];
  /** Replies to deliver from their final record, with the entries they answer. */
  redeliver: Array<{ reply: ReplyRecord; entries: InboxEntry[] }>;
  /** Entries to run again, oldest first. */
  rerun: InboxEntry[];
  /** Entries given up, grouped by the reply (message) that will carry the notice. */
  giveUp: Array<{ replyId: string; entries: InboxEntry[] }>;
}

export function planRecovery(pending: readonly InboxEntry[], outbox: Outbox): RecoveryPlan {
  const plan: RecoveryPlan = { delivered: [], redeliver: [], rerun: [], giveUp: [] };
  const redeliver = new Map<string, { reply: ReplyRecord; entries: InboxEntry[] }>();
  const giveUp = new Map<string, InboxEntry[]>();
  for (const entry of pending) {
    const reply = outbox.replyOf(entry.id);
    if (reply?.delivered) {
      plan.delivered.push(entry);
    } else if (reply?.final) {
      const group = redeliver.get(reply.id) ?? { reply, entries: [] };
      group.entries.push(entry);
      redeliver.set(reply.id, group);
    } else if (entry.attempts >= MAX_STARTED_ATTEMPTS) {
      const key = reply?.id ?? entry.id;
      giveUp.set(key, [...(giveUp.get(key) ?? []), entry]);
    } else {
      plan.rerun.push(entry);
    }
  }
  plan.redeliver = [...redeliver.values()];
  plan.giveUp = [...giveUp].map(([replyId, entries]) => ({ replyId, entries }));
  return plan;
}

export interface RecoveryDeps {
  inbox: Inbox;
  outbox: Outbox;
  log: Logger;
  openReply: (to: InboundMessage, journal?: ReplyJournal) => ReplySink;
  /** Puts an entry back on its lane. */
  rerun: (entry: InboxEntry) => void;
}

/**
 * Carries out the plan: closes, re-delivers and gives up in the background (each reply on its
 * own; a failed delivery is logged and its entries are closed), and re-queues the rest now.
 */
export function recoverInbox(plan: RecoveryPlan, deps: RecoveryDeps): Promise<void> {
  const { inbox, outbox, log } = deps;
  for (const e of plan.delivered) inbox.markDone(e.id);
  const work: Array<Promise<void>> = [];
  for (const { reply, entries } of plan.redeliver) {
    log.info("outbox.redelivering", { reply: reply.id, entries: entries.map((e) => e.id), messages: reply.messageIds.length });
    const to = (inbox.get(reply.id) ?? entries[0]!).message;
    work.push(
      outbox
        .redeliver(reply, to, deps.openReply)
        .catch((error: unknown) => log.error("outbox.redeliver_failed", { reply: reply.id, error }))
        .finally(() => entries.forEach((e) => inbox.markDone(e.id))),
    );
  }
  for (const { replyId, entries } of plan.giveUp) {
    const to = (inbox.get(replyId) ?? entries[0]!).message;
    const sink = outbox.openReply(replyId, (journal) => deps.openReply(to, journal));
    work.push(
      sink
        .finish(GIVEN_UP_TEXT, "failed")
        .catch((error: unknown) => log.error("inbox.give_up_notice_failed", { reply: replyId, error }))
        .finally(() => entries.forEach((e) => inbox.markAbandoned(e.id, `${e.attempts} runs started and none finished`))),
    );
  }
  for (const entry of plan.rerun) deps.rerun(entry);
  return Promise.all(work).then(() => {});
}
