// What a lane run asks of the agent runtime (AgentRuntime.run): the session, its scope and
// purpose, the input, and the chat-facing hooks of the run. The run executor builds it.
import type { AgentEventSink } from "../agent/events.ts";
import type { Scope, UserMessage } from "../agent/messages.ts";
import type { SteeringSource } from "../agent/steering.ts";
import type { AskPerson, OutgoingFile, SentFile, ToolGate } from "../agent/tool.ts";
import type { RunPurpose } from "../spending/usage-record.ts";

export interface SessionRunRequest {
  key: string;
  /** The session's own model (/model); absent means model.name. */
  model?: string | undefined;
  scope: Scope;
  input: UserMessage[];
  signal: AbortSignal;
  emit: AgentEventSink;
  steering?: SteeringSource;
  /** Why the run happens; default "chat". Its model calls are recorded with it. */
  purpose?: RunPurpose;
  /** The channel and sender of the message that started the run, for the usage records. */
  origin?: { channel: string; sender: string };
  /** Sends a file to the chat the run answers (send_file); absent: the run answers no chat. */
  sendFile?: ((file: OutgoingFile, callId: string) => Promise<SentFile>) | undefined;
  /** The owner's approvals for this run's tool calls; absent: every call runs. */
  gate?: ToolGate | undefined;
  /** Only these tools, by name (a background task given a narrower set); absent: the scope's. */
  tools?: readonly string[] | undefined;
  /**
   * In a shared chat, the sender id of the member every message of the run comes from: their
   * notes are in the context and memory_write target person writes them. Absent: nobody's.
   */
  person?: string | undefined;
  /** Asks the person the run answers a question in their chat (MCP elicitation); absent: no chat. */
  ask?: AskPerson | undefined;
  /** See ToolContext.chatKey: a background task started in a group has the group's memory. Absent: `key`. */
  chatKey?: string | undefined;
  /** A run of a group the owner opened to background tasks: the task tools are listed and allowed (tool-policy.ts withTaskTools). */
  openTasks?: boolean | undefined;
}
