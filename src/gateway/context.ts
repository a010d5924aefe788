// Everything one gateway holds, as gateway.ts builds it. Only gateway.ts (and the CLI through
// `Gateway.context`) sees the whole: every piece it hands the context to declares the few stores
// it uses in an interface of its own (RouterDeps, CommandDeps, SchedulerHostDeps, …), so no part
// of the gateway imports this file.
import type { Logger } from "../process/log.ts";
import type { Approvals } from "../approvals/service.ts";
import type { AgentRuntime } from "./agent-runtime.ts";
import type { OwnerQuestions } from "./questions/owner-questions.ts";
import type { ChannelRegistry } from "./delivery/channel-registry.ts";
import type { Config } from "../config/schema.ts";
import type { Inbox } from "./inbox.ts";
import type { LaneManager } from "./lanes.ts";
import type { Outbox } from "./outbox.ts";
import type { PairingStore } from "./access/pairing.ts";
import type { PeopleRegistry } from "../people/registry.ts";
import type { ChatAudiences } from "./access/audience.ts";
import type { PendingQuestions } from "./questions/questions.ts";
import type { RecentChats } from "./router.ts";
import type { CronService } from "../scheduler/service.ts";
import type { TaskService } from "../tasks/service.ts";
import type { SessionStore } from "./sessions.ts";
import type { Budget } from "../spending/budget.ts";
import type { Reservations } from "../spending/reservations.ts";
import type { RateLimiter } from "../spending/rate-limit.ts";
import type { UsageLedger } from "../spending/ledger.ts";
import type { DashboardServer } from "../dashboard/server.ts";
import type { Speaker } from "./delivery/spoken-reply.ts";
import type { InboxEntry } from "./inbox.ts";
import type { Scope } from "../agent/messages.ts";

export interface GatewayContext {
  config: Config;
  home: string;
  log: Logger;
  clock: () => number;
  startedAt: number;
  inbox: Inbox;
  /** What replies to inbox messages put on the platform (message ids, final texts). */
  outbox: Outbox;
  sessions: SessionStore;
  pairing: PairingStore;
  /** The household's people (people.json): whose accounts run as whom. */
  people: PeopleRegistry;
  /** Which chats were private and which direct chats others joined (access/audience.ts). */
  audiences: ChatAudiences;
  lanes: LaneManager;
  channels: ChannelRegistry;
  runtime: AgentRuntime;
  /** Scheduled jobs: the cron tools, `hearth cron …`, and (in the daemon) the engine and heartbeat. */
  cron: CronService;
  /** Background tasks: spawn_task and friends, `/tasks`, `hearth tasks`. */
  tasks: TaskService;
  recent: RecentChats;
  /** Every model call's usage (<home>/usage.jsonl) and today's and this month's totals. */
  usage: UsageLedger;
  /** Asked before a run starts. */
  budget: Budget;
  /** Every paid call's worst case, held while it is made (paid-calls.ts reserves through it). */
  reservations: Reservations;
  /** Shared scopes' per-sender and per-chat limits. */
  rateLimits: RateLimiter;
  /** Asks the owner before a risky or tainted tool call acts; grants and the audit log. */
  approvals: Approvals;
  /** The owner's other buttons: pairing requests, /model, budget notices. */
  ownerQuestions: OwnerQuestions;
  /** The web dashboard, when enabled and serving (the daemon). */
  dashboard?: DashboardServer;
  /** The speaker of an answer (voice-replies.ts speakerFor), or null: text only. Absent: answers are never spoken. */
  speakerFor?: (entry: Pick<InboxEntry, "sessionKey" | "voiceNote" | "message">, scope: Scope) => Speaker | null;
  /** Questions tools ask in a chat (MCP elicitation), waiting for their answer. */
  questions: PendingQuestions;
}
