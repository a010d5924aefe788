// What the scheduler needs from the gateway, in one narrow interface: put a run on a lane, tell
// whether main is busy, send a proactive message, and know where the owner is. Tests hand the
// scheduler a fake of it; the daemon builds it from the gateway context (gateway/hosts/scheduler-host.ts).
import type { UserMessage } from "../agent/messages.ts";
import type { DeliveryTarget, ReplySink } from "../channels/channel.ts";
import type { ChatPlace } from "../channels/chat-place.ts";
import type { BudgetDecision } from "../spending/budget.ts";
import type { RunPurpose } from "../spending/usage-record.ts";

/**
 * A run the scheduler puts on a session's lane: a job's prompt or a heartbeat tick. The gateway's
 * lane item has these fields and more (sending files from a chat), so the gateway queues it as is.
 */
export interface ScheduledRun {
  /** Unique per run (`cron:<runId>`, `heartbeat:<ms>:<n>`); marked done once the reply was handed over. */
  entryId: string;
  /** The user turn as the model will see it. */
  turn: UserMessage;
  /** Who wrote what, for the daily log. */
  source: { channel: string; sender: string; text: string };
  /** The run's own reply; scheduled runs never share one. */
  replyKey: string;
  /** Opens the reply; called when the run starts, at most once. */
  openReply: () => ReplySink;
  arrivedAt: number;
  /** Always false here: messages that arrive meanwhile queue instead of joining a run whose answer goes elsewhere. */
  steerable?: boolean;
  purpose?: RunPurpose;
  /** Whether the exchange belongs in the daily log, given the reply; absent means it does. */
  worthLogging?: (reply: string) => boolean;
  /** The model for this run instead of the session's (heartbeat.model). */
  model?: string;
  /** Set for a job's run whose job was set up by a tainted answer: the run starts tainted, with this reason. */
  taintedBy?: string;
  /**
   * Set for a run whose answer goes to a shared chat: that chat's session key. The run is made in
   * its shared scope (its folder, its tools, its budget), never with the owner's memory.
   */
  sharedIn?: string;
}

export interface SchedulerHost {
  /** Queues `item` behind whatever the session has (followup: a busy session delays it, never drops it). */
  submit(sessionKey: string, item: ScheduledRun): void;
  /** True while main has an active run or queued messages. */
  mainBusy(): boolean;
  /**
   * A proactive message from `from` (`cron job "Stretch" (a1b2c3d4)`, `heartbeat`); resolves with
   * where it went, rejects when it could not be delivered. For the terminal with no chat open it
   * goes to the `cron.fallback` channel when one is set and reachable, else to the mailbox.
   */
  send(to: DeliveryTarget, text: string, from: string): Promise<HostDelivery>;
  /** The owner's most recently used chat; the terminal when none is known yet. */
  ownerTarget(): DeliveryTarget;
  /**
   * The chat the current message of `sessionKey` came from (what `deliver: origin` means for a
   * job the agent creates there); null when unknown.
   */
  originOf(sessionKey: string): DeliveryTarget | null;
  /**
   * Whether background work in `sessionKey` may spend now (budget.ts); asked before a job or a
   * heartbeat is queued. Absent: there is no budget.
   */
  checkBudget?(purpose: "cron" | "heartbeat", sessionKey: string, scope: "main" | "shared"): BudgetDecision;
  /**
   * Whose chat `to` is (channels/chat-place.ts): the owner's, a shared chat the job's answer is
   * made in the scope of, or one no job may post into. Asked when a job is added or changed and
   * before each run.
   */
  placeOf(to: DeliveryTarget): ChatPlace;
  /** When the owner last wrote to Hearth; null when never (since the home was created). */
  ownerMessageAt(): number | null;
  /** When a workspace file last changed; null when unknown (no watcher): the heartbeat then never skips as "unchanged". */
  workspaceChangedAt(): number | null;
  /**
   * Adds a delivered heartbeat to main's transcript as an assistant message, so the conversation
   * knows what was said. Call only while main's lane is held (from the heartbeat's reply).
   */
  recordInMain(text: string): void;
  /**
   * Starts a background task (a job with `task: true`): `parent` gets its result in its
   * transcript, `to` gets the result message. Returns the task's id; throws an Error whose
   * message says why it could not start (the budget, a full disk). Absent: no tasks here.
   */
  spawnTask?(t: { task: string; label: string; parent: string; to: DeliveryTarget; by: string; outside?: string }): string;
  /**
   * The outside content the model's view of `sessionKey` holds (agent/outside-content.ts), in
   * words ("a web page"); null when none. Asked when the agent adds a job. Absent: none.
   */
  outsideContent?(sessionKey: string): string | null;
}

/** Shown in `to` (perhaps the fallback channel's chat instead of the terminal), or kept in the terminal's mailbox. */
export type HostDelivery = { type: "delivered"; to: DeliveryTarget } | { type: "kept"; to: DeliveryTarget };

export const CLI_TARGET: DeliveryTarget = { channel: "cli", chatId: "cli" };
