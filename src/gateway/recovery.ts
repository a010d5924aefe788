// What a start does with the messages a crash (or a stop) left open in the inbox, using what
// the outbox recorded of their replies:
//   - the reply was delivered (only its closing inbox record was lost) → closed;
//   - the run had finished (a final text is recorded) → delivered from the record: the same
//     text into the same messages, with no model call and no tool run again;
//   - the message never reached the model (it waited behind a run) → run again, as usual;
//   - a run of it had started: it is a suspect. A crash may be bad luck (a kill, a power cut, a
//     crash loop with another cause) or the message itself (a poison message that crashes the
//     daemon every time it runs). The two are told apart by a trial: a run that holds the
//     message alone, has the daemon to itself and starts once the daemon has been up long
//     enough to count as stable (STABLE_AFTER_MS without a crash). Only a trial that crashed
//     gives the message up; until then it is retried with a backoff that doubles up to the
//     stable time. Every retry runs in a run of its own (it continues in its own reply, never
//     inside another message's); the one that waited the whole stable time also has the daemon
//     to itself (LaneItem.isolated), as the trial. So bad luck — a crash loop — never gives a message up, and a poison message costs
//     a few crashes, then one trial.
// A suspect's turns leave its session's model view until it runs again, so no other run answers
// it meanwhile. A given-up message is told to its chat (the notice takes over its reply's
// preview), replaced in the transcript's view by a note so no later run answers it, and closed
// `abandoned` in the inbox.
import type { InboundMessage, ReplyJournal, ReplySink } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import type { Inbox, InboxEntry } from "./inbox.ts";
import type { Outbox, ReplyRecord } from "./outbox.ts";

/** How long the daemon must have been up (without a crash: this process) before a run counts as a trial. */
export const STABLE_AFTER_MS = 60_000;
/** The second retry of a suspect waits this long after the start; each crash doubles it, up to the stable time. */
export const RETRY_BASE_MS = 1_000;

export const GIVEN_UP_TEXT =
  "Sorry — I could not answer this message: Hearth crashed every time it tried, also when it ran the message on its own, so I gave up on it. If it still matters, please send it again, perhaps worded differently.";

/** What the model sees in place of a given-up message (see Transcript). */
export const GIVEN_UP_NOTE =
  "(A message was here that Hearth could not answer: answering it crashed Hearth, so it was given up and its sender was asked to send it again. It is not an open question: do not answer it.)";

/**
 * The stable time, which tests shorten through HEARTH_STABLE_AFTER_MS (internal: not a
 * configuration key). A value that is not a positive whole number is ignored.
 */
export function stableAfterMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HEARTH_STABLE_AFTER_MS;
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : STABLE_AFTER_MS;
}

/**
 * How long after the start a suspect, `attempts` runs of which crashed, waits before its next
 * run: the first retry at once (in its place in the queue), then 1 s, 2 s, 4 s… up to the stable time.
 */
export function retryDelayMs(attempts: number, stableMs: number): number {
  if (attempts <= 1) return 0;
  return Math.min(stableMs, RETRY_BASE_MS * 2 ** (attempts - 2));
}

export interface RecoveryPlan {
  /** Replies whose delivery was confirmed: their entries only need closing. */
  delivered: InboxEntry[];
  /** Replies to deliver from their final record, with the entries they answer. */
  redeliver: Array<{ reply: ReplyRecord; entries: InboxEntry[] }>;
  /** Entries that never reached the model: run again at once, oldest first. */
  rerun: InboxEntry[];
  /**
   * Entries a crash interrupted: run again after their backoff, oldest first; `trial`: the
   * backoff reached the stable time, so the run is isolated and counts as a trial.
   */
  suspects: Array<{ entry: InboxEntry; delayMs: number; trial: boolean }>;
  /** Entries whose trial crashed: given up, each with a notice in its own reply. */
  giveUp: InboxEntry[];
}

export function planRecovery(pending: readonly InboxEntry[], outbox: Outbox, stableMs = STABLE_AFTER_MS): RecoveryPlan {
  const plan: RecoveryPlan = { delivered: [], redeliver: [], rerun: [], suspects: [], giveUp: [] };
  const redeliver = new Map<string, { reply: ReplyRecord; entries: InboxEntry[] }>();
  for (const entry of pending) {
    const reply = outbox.replyOf(entry.id);
    if (reply?.delivered) {
      plan.delivered.push(entry);
    } else if (reply?.final) {
      const group = redeliver.get(reply.id) ?? { reply, entries: [] };
      group.entries.push(entry);
      redeliver.set(reply.id, group);
    } else if (entry.trials > 0) {
      plan.giveUp.push(entry);
    } else if (entry.attempts > 0) {
      const delayMs = retryDelayMs(entry.attempts, stableMs);
      plan.suspects.push({ entry, delayMs, trial: delayMs >= stableMs });
    } else {
      plan.rerun.push(entry);
    }
  }
  plan.redeliver = [...redeliver.values()];
  return plan;
}

export interface RecoveryDeps {
  inbox: Inbox;
  outbox: Outbox;
  log: Logger;
  openReply: (to: InboundMessage, journal?: ReplyJournal) => ReplySink;
  /** Puts an entry back on its lane; `alone`: in a run of its own, or also with the daemon to itself (LaneItem). */
  rerun: (entry: InboxEntry, alone?: "solo" | "isolated") => void;
  /**
   * Takes the entry's turns out of its session's model view (what a cut-off run left there), so
   * that no other run answers it; `note` is shown in their place (a given-up message).
   */
  withdrawTurns: (entry: InboxEntry, note?: string) => void;
  /** Schedules `fn` after `ms`; returns a cancel function (the gateway clears it on stop). */
  later: (ms: number, fn: () => void) => () => void;
  /**
   * Optional: delivers a reply from its final record and closes its entries (HeldReplies: at
   * once when its channel runs, else once it does). Without it the reply is delivered now and
   * its entries closed, delivered or not.
   */
  redeliver?: (reply: ReplyRecord, entries: InboxEntry[], to: InboundMessage) => Promise<void>;
}

/**
 * Carries out the plan: closes, re-delivers and gives up in the background (each reply on its
 * own; a failed delivery is logged and its entries are closed), re-queues what never started
 * now and the suspects after their backoff. Returns when the background work is done, and a
 * function that cancels the suspects' timers.
 */
export function recoverInbox(plan: RecoveryPlan, deps: RecoveryDeps): { done: Promise<void>; cancel: () => void } {
  const { inbox, outbox, log } = deps;
  for (const e of plan.delivered) inbox.markDone(e.id);
  const work: Array<Promise<void>> = [];
  for (const { reply, entries } of plan.redeliver) {
    const to = (inbox.get(reply.id) ?? entries[0]!).message;
    if (deps.redeliver) {
      work.push(deps.redeliver(reply, entries, to));
      continue;
    }
    log.info("outbox.redelivering", { reply: reply.id, entries: entries.map((e) => e.id), messages: reply.messageIds.length });
    work.push(
      outbox
        .redeliver(reply, to, deps.openReply)
        .catch((error: unknown) => log.error("outbox.redeliver_failed", { reply: reply.id, error }))
        .finally(() => entries.forEach((e) => inbox.markDone(e.id))),
    );
  }
  for (const entry of plan.giveUp) {
    // Its trial was a run of its own: the notice takes over that run's preview, in its own reply.
    outbox.detach(entry.id);
    const sink = outbox.openReply(entry.id, (journal) => deps.openReply(entry.message, journal));
    const reason = `a run that held it alone crashed the daemon (${entry.attempts} runs started, ${entry.trials} of them alone after the daemon was stable)`;
    withdraw(deps, entry, GIVEN_UP_NOTE);
    work.push(
      sink
        .finish(GIVEN_UP_TEXT, "failed")
        .catch((error: unknown) => log.error("inbox.give_up_notice_failed", { reply: entry.id, error }))
        .finally(() => {
          outbox.release(entry.id);
          inbox.markAbandoned(entry.id, reason);
        }),
    );
  }
  // What runs now keeps its order (oldest first); later retries wait for their timers.
  const now: Array<{ entry: InboxEntry; alone?: "solo" }> = plan.rerun.map((entry) => ({ entry }));
  const timers: Array<() => void> = [];
  for (const { entry, delayMs, trial } of plan.suspects) {
    // It runs in a run of its own now: a reply it shared with other messages must not answer it
    // any more, and until it runs, no other run may see it as an open question.
    outbox.detach(entry.id);
    withdraw(deps, entry);
    log.warn("inbox.retrying_suspect", { id: entry.id, session: entry.sessionKey, attempts: entry.attempts, delayMs, trial });
    if (delayMs === 0 && !trial) now.push({ entry, alone: "solo" });
    else timers.push(deps.later(delayMs, () => deps.rerun(entry, trial ? "isolated" : "solo")));
  }
  now.sort((a, b) => a.entry.acceptedAt - b.entry.acceptedAt);
  for (const { entry, alone } of now) deps.rerun(entry, alone);
  return { done: Promise.all(work).then(() => {}), cancel: () => timers.forEach((c) => c()) };
}

/** A transcript that cannot be written (a full disk) is logged: the run still goes ahead. */
function withdraw(deps: RecoveryDeps, entry: InboxEntry, note?: string): void {
  try {
    deps.withdrawTurns(entry, note);
  } catch (error) {
    deps.log.error("transcript.withdraw_failed", { id: entry.id, session: entry.sessionKey, error });
  }
}
