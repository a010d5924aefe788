// What a lane carries and what it asks of a run: one accepted message (LaneItem), the run it
// starts or joins (RunContext) and the executor's contract (RunExecutor). The lane machinery is
// lanes.ts; the executor the daemon uses is run-executor.ts.
import type { AgentEvent, RunStatus } from "../agent/events.ts";
import type { UserMessage } from "../agent/messages.ts";
import type { SteeringSource } from "../agent/steering.ts";
import type { AskPerson, OutgoingFile, SentFile } from "../agent/tool.ts";
import type { DeliveryTarget, ReplySink } from "../channels/channel.ts";
import type { RunPurpose } from "../spending/usage-record.ts";

/** One accepted message waiting in, or joined to, a lane. */
export interface LaneItem {
  /** The inbox id, marked done once the item's reply was handed over. */
  entryId: string;
  /** The user turn as the model will see it. */
  turn: UserMessage;
  /** Who wrote what, for the daily log. */
  source: { channel: string; sender: string; text: string };
  /** Items with the same key share one reply (same chat); CLI requests each have their own. */
  replyKey: string;
  /** Opens the reply for this item; called when the item joins a run, at most once per key and run. */
  openReply: () => ReplySink;
  /** Sends a file to the item's chat as part of its reply (send_file); absent: no chat to send to. */
  sendFile?: (file: OutgoingFile, callId: string) => Promise<SentFile>;
  /** The chat the item came from, where the owner is asked before a risky tool call; absent: background work. */
  chat?: DeliveryTarget;
  /**
   * Set when the item carries outside content (another person's words, a task or job set up by a
   * tainted answer): the run starts tainted, and this clause is the approval question's reason
   * ("this run read a message from Bob").
   */
  taintedBy?: string;
  /** Asks the item's sender a question in its chat (MCP elicitation); absent: no chat to ask. */
  ask?: AskPerson;
  arrivedAt: number;
  /**
   * False for a run that answers someone else (a scheduled job, the heartbeat): messages that
   * arrive meanwhile must not join it — its answer is delivered elsewhere — and queue instead.
   */
  steerable?: boolean;
  /** Why the run happens (usage records, budget checks, the heartbeat's own session); absent means "chat". */
  purpose?: RunPurpose;
  /** Whether the exchange belongs in the daily log, given the reply; absent means it does. */
  worthLogging?: (reply: string) => boolean;
  /** See ScheduledRun.sharedIn: a job whose answer goes to a shared chat is made in that chat's scope. */
  sharedIn?: string;
  /** The model for the run this item starts, instead of the session's (heartbeat.model). */
  model?: string;
  /** Only these tools for the run this item starts (a background task's `tools`); absent: the scope's. */
  tools?: readonly string[];
  /** From a group the owner opened to background tasks (access.ts opensTasks): the run gets the task tools. */
  openTasks?: boolean;
  /**
   * In a shared chat, the sender id of the member who wrote it: their own notes are shown to a
   * run that answers only them, so a message of another member never steers into that run or
   * joins its collected batch (it queues behind it). Absent for the owner's main session.
   */
  person?: string;
  /**
   * Run it in a run of its own that no message joins, whatever the queue mode (a message
   * retried after a crash continues in its own reply, never inside someone else's).
   */
  solo?: boolean;
  /**
   * Solo, and while no other run is active in any lane: a crash during such a run can only be
   * this message's doing.
   */
  isolated?: boolean;
}

export interface RunContext {
  sessionKey: string;
  items: LaneItem[];
  signal: AbortSignal;
  /** Steering for the loop: taking a message attaches its reply to this run. */
  steering: SteeringSource;
  emit: (e: AgentEvent) => void;
}

export interface RunOutcome {
  status: RunStatus;
  text: string;
  /** The run could not be recorded (disk full): its messages stay open in the inbox, to be answered later. */
  keep?: boolean;
}

/**
 * Runs one agent run. Must not throw (a throw is caught, reported and treated as an error);
 * must honour `signal` promptly.
 */
export type RunExecutor = (ctx: RunContext) => Promise<RunOutcome>;
