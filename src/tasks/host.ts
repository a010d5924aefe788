// What background tasks need from the gateway, in one narrow interface: the durable inbox entry a
// task runs as, its lane, the outbox reply its result is delivered through, the parent session's
// transcript and the budget. The daemon builds it from the gateway context (gateway/hosts/task-host.ts);
// tests hand the task service a fake of it.
import type { Scope, UserMessage } from "../agent/messages.ts";
import type { DeliveryTarget, ReplySink } from "../channels/channel.ts";
import type { ChatPlace } from "../channels/chat-place.ts";
import type { BudgetDecision } from "../spending/budget.ts";

/** A task's run as the gateway queues it on the task's own lane (`task:<id>`). */
export interface TaskRun {
  /** The task's inbox entry: marked done once its result was delivered. */
  entryId: string;
  turn: UserMessage;
  source: { channel: string; sender: string; text: string };
  replyKey: string;
  /** Opens the run's reply; called when the run starts, at most once. */
  openReply: () => ReplySink;
  arrivedAt: number;
  /** Always false: nothing the owner writes joins a task's run. */
  steerable: false;
  purpose: "task";
  model?: string;
  /** Only these tools (spawn_task's `tools`); absent: the parent scope's. */
  tools?: readonly string[];
  /** Set for a task started by a tainted answer: the run starts tainted, with this reason. */
  taintedBy?: string;
}

export interface TaskHost {
  /**
   * Records the task's message in the durable inbox (fsynced) for session `sessionKey`, as if it
   * came from `to` (the chat its result goes to); returns the entry id. Throws when it cannot be
   * written (a full disk): the task is then not started.
   */
  accept(taskId: string, sessionKey: string, to: DeliveryTarget, text: string): string;
  /** Whether the inbox knows entry `entryId` (open, or done recently). */
  known(entryId: string): boolean;
  /** Puts the run on its session's lane; `alone` as for a message a crash left suspect (recovery). */
  submit(sessionKey: string, run: TaskRun, alone?: "solo" | "isolated"): void;
  /** Aborts the session's run, if any (cancel_task, a cap). */
  stop(sessionKey: string): void;
  /**
   * The reply of entry `entryId` through the outbox: its final text is recorded before delivery and
   * delivered once to the chat the entry came from, even across a crash.
   */
  openResult(entryId: string): ReplySink;
  /** Closes entry `entryId` without a run (a queued task cancelled). */
  markDone(entryId: string): void;
  /**
   * Adds `text` to session `sessionKey`'s transcript as a system turn the model sees in its next
   * run, marked as outside content when `outside` is given. Returns false, adding nothing, while
   * the session has a run: call again when it has none.
   */
  noteInSession(sessionKey: string, text: string, outside?: string): boolean;
  /**
   * The outside content the model's view of `sessionKey` holds (agent/outside-content.ts), in
   * words ("a web page"); null when none. A task started from a tainted view is tainted, and a
   * task whose view ended tainted taints the session its result is noted in.
   */
  outsideContent(sessionKey: string): string | null;
  /** The chat the current message of `sessionKey` came from (a group session: that group); null when unknown. */
  originOf(sessionKey: string): DeliveryTarget | null;
  /**
   * Whose chat `to` is (channels/chat-place.ts), for a task started for a chat other than its
   * parent's (a job's task): a shared chat's task runs in its scope; a refused one never starts.
   */
  placeOf(to: DeliveryTarget): ChatPlace;
  /** Whether a task started from `sessionKey` in `scope` may spend now (a shared one: also the shared scopes' limit). */
  checkBudget(sessionKey: string, scope: Scope): BudgetDecision;
  /**
   * Counts a task started from group session `sessionKey` (by member `person`, when one) against
   * that group's rate limits, as one of its messages. Returns null when admitted, else a sentence
   * saying why not and when to try again; a refusal counts nothing.
   */
  admitShared(sessionKey: string, person?: string): string | null;
}
