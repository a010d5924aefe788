// What the router, the commands and the run executor share inside one gateway.
import type { Logger } from "../log.ts";
import type { AgentRuntime } from "./agent-runtime.ts";
import type { ChannelRegistry } from "./delivery/channel-registry.ts";
import type { Config } from "../config/schema.ts";
import type { Inbox } from "./inbox.ts";
import type { LaneManager } from "./lanes.ts";
import type { Outbox } from "./outbox.ts";
import type { PairingStore } from "./pairing.ts";
import type { PendingQuestions } from "./questions.ts";
import type { RecentChats } from "./router.ts";
import type { CronService } from "../scheduler/service.ts";
import type { SessionStore } from "./sessions.ts";
import type { Budget } from "../spending/budget.ts";
import type { RateLimiter } from "../spending/rate-limit.ts";
import type { UsageLedger } from "../spending/ledger.ts";

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
  lanes: LaneManager;
  channels: ChannelRegistry;
  runtime: AgentRuntime;
  /** Scheduled jobs: the cron tools, `hearth cron …`, and (in the daemon) the engine and heartbeat. */
  cron: CronService;
  recent: RecentChats;
  /** Every model call's usage (<home>/usage.jsonl) and today's and this month's totals. */
  usage: UsageLedger;
  /** Asked before a run spends. */
  budget: Budget;
  /** Shared scopes' per-sender and per-chat limits. */
  rateLimits: RateLimiter;
  /** Questions tools ask in a chat (MCP elicitation), waiting for their answer. */
  questions: PendingQuestions;
}
