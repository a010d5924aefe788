// A snapshot of the running gateway, for /status and `hearth status`.
import { describeSandbox } from "../agent/tools/sandbox.ts";
import type { ChannelId, ChannelStatus } from "../channels/channel.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import type { ServerView } from "../agent/mcp/server-view.ts";
import { UnknownModelError } from "../agent/providers/registry.ts";
import type { ModelInfo } from "./agent-runtime.ts";
import { describeDamaged, listDamaged } from "./upkeep/damaged-state.ts";
import type { BudgetStatus } from "../spending/budget.ts";
import type { Approvals } from "../approvals/service.ts";
import type { Config } from "../config/schema.ts";
import type { DashboardServer } from "../dashboard/server.ts";
import type { Budget } from "../spending/budget.ts";
import type { AgentRuntime } from "./agent-runtime.ts";
import type { ChannelRegistry } from "./delivery/channel-registry.ts";
import type { LaneManager } from "./lanes.ts";
import type { SessionStore } from "./sessions.ts";

/** What the status snapshot reads of the gateway. */
export interface StatusDeps {
  approvals: Approvals;
  budget: Budget;
  channels: ChannelRegistry;
  config: Config;
  dashboard?: DashboardServer;
  home: string;
  lanes: LaneManager;
  runtime: AgentRuntime;
  sessions: SessionStore;
  startedAt: number;
}

export interface SessionStatus {
  key: string;
  scope: "main" | "shared";
  /** The session's model: its /model choice, else model.name. */
  model: string;
  title?: string;
  lastActivityAt: number;
  contextTokens: number;
  contextPercent: number;
  running: boolean;
  runningForMs: number | null;
  queued: number;
  /** The call its run waits on the owner's approval for ("exec: rm -r build"); absent while none waits. */
  waitingFor?: string;
}

export interface GatewayStatus {
  pid: number;
  startedAt: number;
  home: string;
  model: string;
  channels: Array<{ id: ChannelId } & ChannelStatus>;
  sessions: SessionStatus[];
  activeRuns: number;
  /** Where exec commands run: "bwrap" or "none", and what that means, in one line. */
  execSandbox: { kind: "bwrap" | "none"; detail: string };
  /** Spending today and this month (from usage.jsonl) against the budget's limits. */
  budget: BudgetStatus;
  today: { date: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number; costUsd: number; runs: number };
  /** One line per damaged state file set aside and not yet dealt with (damaged-state.ts). */
  damaged: string[];
  /** Configured MCP servers with their state (src/agent/mcp/connection.ts). */
  mcp: ServerView[];
  /** Proactive messages waiting in the terminal's mailbox for the next `hearth chat`. */
  terminalMailbox: number;
  /** The dashboard's address when it is serving (`hearth dashboard` prints a login link). */
  dashboard: string | null;
}

/** "MCP server github is down: <last error>" per enabled server that is not ready. */
export function mcpDownLines(servers: readonly ServerView[]): string[] {
  const login = servers.filter((v) => v.status === "needs_login").map((v) => `MCP server ${v.name} needs a login: \`${hearthCmd(`mcp login ${v.name}`)}\``);
  return servers
    .filter((v) => v.status === "down" || v.status === "starting")
    // A server starting again after a failure is down until it is ready: say so, with why.
    .map((v) => `MCP server ${v.name} is ${v.status === "down" || v.lastError ? "down" : "still starting"}${v.lastError ? `: ${v.lastError}` : ""}`)
    .concat(login);
}

export function gatewayStatus(ctx: StatusDeps): GatewayStatus {
  const lanes = new Map(ctx.lanes.snapshot().map((l) => [l.key, l]));
  const sessions = ctx.sessions.all().map((s): SessionStatus => {
    const lane = lanes.get(s.key);
    const window = sessionModelInfo(ctx, s.model).contextWindow;
    const waitingFor = ctx.approvals?.waitingIn(s.key) ?? null;
    return {
      key: s.key,
      scope: s.scope,
      model: s.model ?? ctx.config.model.name,
      ...(s.title ? { title: s.title } : {}),
      lastActivityAt: s.lastActivityAt,
      contextTokens: s.contextTokens,
      contextPercent: Math.round((s.contextTokens / window) * 100),
      running: lane?.running ?? false,
      runningForMs: lane?.runningSinceMs ?? null,
      queued: lane?.queued ?? 0,
      ...(waitingFor ? { waitingFor } : {}),
    };
  });
  const day = ctx.sessions.today();
  const budget = ctx.budget.status();
  return {
    pid: process.pid,
    startedAt: ctx.startedAt,
    home: ctx.home,
    model: ctx.config.model.name,
    channels: ctx.channels.ids().map((id) => ({ id, ...ctx.channels.status(id) })),
    sessions,
    activeRuns: sessions.filter((s) => s.running).length,
    execSandbox: { kind: ctx.runtime.execSandbox.kind, detail: describeSandbox(ctx.runtime.execSandbox) },
    budget,
    // The cost is the usage ledger's (config prices included), the same figure budgets use.
    today: { date: day.date, ...day.usage, costUsd: budget.today.spentUsd, runs: day.runs },
    damaged: listDamaged(ctx.home).map(describeDamaged),
    mcp: ctx.runtime.mcp?.views() ?? [],
    terminalMailbox: ctx.channels.terminalWaiting(),
    dashboard: ctx.dashboard?.url ?? null,
  };
}

/** The session's model as the runtime sees it; a name config no longer serves falls back to model.name. */
export function sessionModelInfo(ctx: StatusDeps, name: string | undefined): ModelInfo {
  try {
    return ctx.runtime.modelInfo(name);
  } catch (err) {
    if (!(err instanceof UnknownModelError)) throw err;
    return ctx.runtime.modelInfo();
  }
}

export const formatTokens = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k` : String(n));

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
