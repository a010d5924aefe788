// The dashboard's host (dashboard/host.ts) over the gateway context: the same stores and paths
// the chat and the CLI use, so the dashboard has exactly the owner's powers.
import { channelAccess, CONFIGURABLE } from "../../channels/registry.ts";
import path from "node:path";
import { textOf } from "../../agent/messages.ts";
import { readTranscript } from "../../agent/transcript.ts";
import type { ChannelId } from "../../channels/channel.ts";
import type { CliChannel } from "../../channels/terminal/channel.ts";
import { homePaths } from "../../config/home.ts";
import type { AccessRules, ChatLine, DashboardHost, NoteVersion } from "../../dashboard/host.ts";
import type { LogTail } from "../../process/log.ts";
import { listNotes, readNoteForEdit, saveNote } from "../../memory/workspace-edit.ts";
import { readUsageRecords, usageFile } from "../../spending/usage-record.ts";
import { chatNames } from "./chat-names.ts";
import { approvePairing } from "../access/pairing-approval.ts";
import { gatewayStatus } from "../status.ts";
import type { Approvals } from "../../approvals/service.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import type { CronService } from "../../scheduler/service.ts";
import type { Budget } from "../../spending/budget.ts";
import type { TaskService } from "../../tasks/service.ts";
import type { PairingApprovalDeps } from "../access/pairing-approval.ts";
import type { PairingStore } from "../access/pairing.ts";
import type { AgentRuntime } from "../agent-runtime.ts";
import type { LaneManager } from "../lanes.ts";
import type { SessionStore } from "../sessions.ts";
import type { StatusDeps } from "../status.ts";

/** What the dashboard's host uses of the gateway. */
export interface DashboardHostDeps extends StatusDeps, PairingApprovalDeps {
  approvals: Approvals;
  budget: Budget;
  clock: () => number;
  config: Config;
  cron: CronService;
  home: string;
  lanes: LaneManager;
  log: Logger;
  pairing: PairingStore;
  runtime: AgentRuntime;
  sessions: SessionStore;
  tasks: TaskService;
}

export function dashboardHost(ctx: DashboardHostDeps, cli: CliChannel, tail: LogTail | undefined): DashboardHost {
  const { config, home, log } = ctx;
  const paths = homePaths(home);
  const noteLog = log.child({ component: "dashboard" });
  return {
    status: () => gatewayStatus(ctx),
    names: () => chatNames(ctx),
    mainHistory: (limit) => mainHistory(paths.sessionFile("main"), limit),
    chat: {
      attach: (write) => cli.attach(write),
      detach: (client) => cli.detach(client),
      send: (client, text, files) => cli.receive(client, text, undefined, files),
      watch: (onNotice) => cli.watchNotices(onNotice),
      stop: () => ctx.lanes.stop("main"),
      uploadDir: () => path.join(home, "dashboard-uploads"),
    },
    notes: {
      list: () => listNotes(config.workspace),
      read: (relPath) => readNoteForEdit(config.workspace, relPath, noteLog),
      save: (relPath, text, version) => {
        const saved = saveNote(config.workspace, relPath, text, version, noteLog);
        if (saved.type === "saved") ctx.runtime.memory?.noteOwnerEdit(saved.relPath);
        return saved;
      },
      search: async (query) => {
        const tool = ctx.runtime.memory?.tools().find((t) => t.name === "memory_search");
        if (!tool) return "Memory search is not available (no workspace memory).";
        const input = tool.input.safeParse({ query });
        if (!input.success) return "The search needs some words.";
        const out = await tool.execute(input.data, { signal: AbortSignal.timeout(30_000), workspace: config.workspace, scope: "main", sessionKey: "main", log: noteLog });
        return out.content;
      },
      history: (relPath, limit) =>
        noteHistory(paths.history, relPath, limit).catch((err: unknown) => {
          noteLog.warn("dashboard.history_failed", { path: relPath, error: err });
          return [];
        }),
    },
    approvals: {
      open: () => ctx.approvals.open(),
      press: (key, choice) => ctx.approvals.press({ key, choiceId: choice, channel: "cli", by: { id: "dashboard", name: "you (dashboard)", isOwner: true } }),
      grants: () => ctx.approvals.grants.active(),
      revoke: (at, pattern) => {
        const n = ctx.approvals.grants.active().findIndex((g) => g.at === at && g.pattern === pattern);
        return n < 0 ? null : ctx.approvals.grants.revoke(n + 1);
      },
      audit: (limit) => ctx.approvals.audit.read().slice(-limit),
    },
    tasks: {
      list: () => ctx.tasks.list(),
      cancel: (id) => ctx.tasks.cancel(id),
    },
    cron: {
      list: () => ctx.cron.list(),
      add: (input) => ctx.cron.add(input, { createdBy: "cli" }),
      update: (id, input) => ctx.cron.update(id, input),
      remove: (id) => ctx.cron.remove(id),
      runNow: (id) => ctx.cron.runNow(id),
      setEnabled: (id, enabled) => ctx.cron.setEnabled(id, enabled),
      recentRuns: (limit) => ctx.cron.recentRuns(limit),
      heartbeat: () => ({
        every: config.heartbeat.every,
        activeHours: `${config.heartbeat.activeHours.start}–${config.heartbeat.activeHours.end}`,
        lastTicks: heartbeatTicks(tail),
      }),
    },
    usage: {
      records: (sinceMs) => readUsageRecords(usageFile(home)).values.filter((r) => Date.parse(r.at) >= sinceMs),
      budget: () => ctx.budget.status(),
      timezone: config.timezone,
    },
    people: {
      pending: () => ctx.pairing.list().pending,
      paired: () => ctx.pairing.list().approved,
      approve: (code) => approvePairing(ctx, code),
      deny: (code) => ctx.pairing.deny(code),
      revoke: (channel, userId) => ctx.pairing.revoke(channel as ChannelId, userId),
      rules: () => accessRules(ctx),
    },
    logs: {
      lines: () => tail?.lines() ?? [],
      subscribe: (listener) => tail?.subscribe(listener) ?? (() => {}),
    },
    clock: ctx.clock,
  };
}

/** The file's versions in `<home>/history.git`, each with its change (as `hearth memory log FILE` and `memory diff REV`). */
async function noteHistory(gitdir: string, relPath: string, limit: number): Promise<NoteVersion[]> {
  // Imported when a page first asks: this file loads with the daemon, the history's reader need not.
  const [{ fileChanges, commitSubject }, { GitStore }, { unifiedDiff }, { isTracked }] = await Promise.all([
    import("../../memory/history/file-log.ts"),
    import("../../memory/history/git-store.ts"),
    import("../../memory/history/line-diff.ts"),
    import("../../memory/history/tracked.ts"),
  ]);
  if (!isTracked(relPath)) return [];
  const store = await GitStore.open(gitdir, { create: false });
  if (!store?.head()) return [];
  const text = async (blob: string | null) => (blob ? (await store.readBlob(blob)).toString("utf8") : null);
  const out: NoteVersion[] = [];
  for (const c of await fileChanges(store, relPath, limit)) {
    out.push({ oid: c.commit.oid, at: c.commit.at, subject: commitSubject(c.commit), diff: unifiedDiff(relPath, await text(c.before), await text(c.after)) });
  }
  return out;
}

/** The line the runtime puts before a user turn for the model: "[2026-11-25 17:11 (Wed), UTC · cli · owner]". */
const TURN_HEADER = /^\[[^\]\n]*\]\n/;

function mainHistory(file: string, limit: number): ChatLine[] {
  const lines: ChatLine[] = [];
  for (const r of readTranscript(file).records) {
    if (r.type !== "message") continue;
    const m = r.message;
    if (m.role === "user" && m.kind === "message") lines.push({ role: "user", text: m.text.replace(TURN_HEADER, ""), at: m.ts });
    else if (m.role === "assistant") {
      const text = textOf(m).trim();
      if (text) lines.push({ role: "assistant", text, at: m.ts });
    }
  }
  return lines.slice(-limit);
}

function accessRules(ctx: DashboardHostDeps): AccessRules[] {
  const out: AccessRules[] = [];
  for (const c of CONFIGURABLE) {
    const a = channelAccess(ctx.config.channels, c.id);
    if (a) out.push({ channel: c.id, dmPolicy: a.dmPolicy, allowFrom: a.allowFrom, groups: a.groups.allow, groupPolicy: a.groups.policy, dmRateLimit: `${a.dmRateLimit.perSender} per ${a.dmRateLimit.window}` });
  }
  return out;
}

/** The heartbeat's newest log events, newest first. */
function heartbeatTicks(tail: LogTail | undefined): Array<{ at: string; event: string; detail: string }> {
  const out: Array<{ at: string; event: string; detail: string }> = [];
  for (const line of (tail?.lines() ?? []).reverse()) {
    if (out.length >= 10) break;
    try {
      const { t, event, reason, to, outcome } = JSON.parse(line) as Record<string, unknown>;
      if (typeof event === "string" && event.startsWith("heartbeat.")) out.push({ at: String(t), event, detail: String(reason ?? to ?? outcome ?? "") });
    } catch {
      // not JSON: not ours to show
    }
  }
  return out;
}
