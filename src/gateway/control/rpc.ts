// Operations the CLI asks a running daemon for over the control socket. Each method checks its
// parameters and fails with a message meant for the user.
import { hearthCmd } from "../../process/hearth-command.ts";
import type { ChannelId } from "../../channels/channel.ts";
import { approvePairing } from "../access/pairing-approval.ts";
import type { JobInput } from "../../scheduler/job-input.ts";
import type { CronService } from "../../scheduler/service.ts";
import type { TaskService } from "../../tasks/service.ts";
import type { PairingApprovalDeps } from "../access/pairing-approval.ts";
import type { PairingStore } from "../access/pairing.ts";
import type { AgentRuntime } from "../agent-runtime.ts";
import { peopleMethods, type PeopleRpcDeps } from "./people-rpc.ts";

/** What the control socket's methods use of the gateway. */
export interface RpcDeps extends PairingApprovalDeps, PeopleRpcDeps {
  cron: CronService;
  /** The web dashboard when it serves (dashboard/server.ts): a login link, and ending every login. */
  dashboard?: { loginUrl(): string; rotate(): number };
  pairing: PairingStore;
  runtime: AgentRuntime;
  tasks: TaskService;
}

type Handler = (params: Record<string, unknown>) => unknown;

export function createRpcHandler(ctx: RpcDeps): (method: string, params: unknown) => Promise<unknown> {
  const methods: Record<string, Handler> = {
    "pairing.list": () => ctx.pairing.list(),
    "pairing.approve": (p) => {
      const code = stringParam(p, "code");
      const approved = approvePairing(ctx, code);
      if (!approved) throw new Error(`No pending pairing code "${code}". Codes expire after an hour; \`${hearthCmd("pairing list")}\` shows the pending ones.`);
      return approved;
    },
    "pairing.revoke": (p) => {
      const channel = stringParam(p, "channel") as ChannelId;
      const userId = stringParam(p, "userId");
      if (!ctx.pairing.revoke(channel, userId)) throw new Error(`${channel}:${userId} is not an approved sender.`);
      return { revoked: `${channel}:${userId}` };
    },
    ...peopleMethods(ctx),
    "cron.list": () => ctx.cron.list(),
    "cron.add": (p) => ctx.cron.add(jobInputParam(p), { createdBy: "cli" }),
    "cron.remove": (p) => ctx.cron.remove(stringParam(p, "id")),
    "cron.run": (p) => ctx.cron.runNow(stringParam(p, "id")),
    "heartbeat.now": () => ctx.cron.heartbeatNow(),
    "tasks.list": () => ctx.tasks.list(),
    "tasks.get": (p) => ctx.tasks.get(stringParam(p, "id")),
    "tasks.cancel": (p) => ctx.tasks.cancel(stringParam(p, "id")),
    "dashboard.login": () => ({ url: dashboardOf(ctx).loginUrl() }),
    "dashboard.rotate": () => ({ ended: dashboardOf(ctx).rotate() }),
    "mcp.list": () => ctx.runtime.mcp?.views() ?? [],
    "mcp.tools": (p) => {
      const name = stringParam(p, "name");
      const tools = ctx.runtime.mcp?.toolsOf(name);
      if (!tools) throw new Error(`No MCP server "${name}" is configured. \`${hearthCmd("mcp")}\` lists them.`);
      return tools;
    },
    "mcp.catalog": async (p) => {
      const name = stringParam(p, "name");
      const catalog = await ctx.runtime.mcp?.catalog(name);
      if (!catalog) throw new Error(`No MCP server "${name}" is configured. \`${hearthCmd("mcp")}\` lists them.`);
      return catalog;
    },
    "mcp.reconnect": async (p) => {
      const name = stringParam(p, "name");
      if (!(await ctx.runtime.mcp?.reconnect(name))) throw new Error(`No MCP server "${name}" is configured. \`${hearthCmd("mcp")}\` lists them.`);
      return ctx.runtime.mcp!.views().find((v) => v.name === name);
    },
  };
  return async (method, params) => {
    const handler = methods[method];
    if (!handler) throw new Error(`Unknown operation "${method}". This daemon knows: ${Object.keys(methods).join(", ")}.`);
    return handler(params && typeof params === "object" ? (params as Record<string, unknown>) : {});
  };
}

function dashboardOf(ctx: RpcDeps): NonNullable<RpcDeps["dashboard"]> {
  if (!ctx.dashboard) throw new Error('The dashboard is off. Turn it on with "dashboard": { "enabled": true } in config.json, then restart Hearth.');
  return ctx.dashboard;
}

function stringParam(p: Record<string, unknown>, name: string): string {
  const v = p[name];
  if (typeof v !== "string" || !v.trim()) throw new Error(`Missing parameter "${name}".`);
  return v.trim();
}

const JOB_INPUT_FIELDS = ["name", "cron", "tz", "every", "at", "message", "session", "deliver", "catchUp"] as const satisfies ReadonlyArray<keyof JobInput>;

/** The string fields of a new job (`hearth cron add`); the scheduler validates them. */
function jobInputParam(p: Record<string, unknown>): JobInput {
  const input: JobInput = {};
  for (const k of JOB_INPUT_FIELDS) if (typeof p[k] === "string") input[k] = p[k];
  if (p.task === true) input.task = true;
  return input;
}
