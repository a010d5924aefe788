// The gateway: everything `hearth start` runs, started step by step and stopped in reverse.
import { join } from "node:path";
import type { ModelClient } from "../agent/providers/model.ts";
import type { Backoff } from "../agent/mcp/server-view.ts";
import { McpManager } from "../agent/mcp/manager.ts";
import { sandboxedLauncher } from "../agent/mcp/launch.ts";
import { SkillRegistry } from "../agent/skills/registry.ts";
import { markerPrefixFor, SshHosts } from "../agent/tools/index.ts";
import type { Channel, ChannelId, DeliveryTarget, InboundMessage } from "../channels/channel.ts";
import { CONFIGURABLE, ownerPrivateChat } from "../channels/registry.ts";
import { CLI_TARGET } from "../scheduler/host.ts";
import { CliChannel } from "../channels/terminal/channel.ts";
import type { Logger, LogTail } from "../process/log.ts";
import type { MemoryService } from "../memory/memory.ts";
import { DiskFullError, isDiskFull } from "../state/storage.ts";
import { createAgentRuntime } from "./agent-runtime.ts";
import { routePlatformCommand } from "./platform-commands.ts";
import { ChannelRegistry } from "./delivery/channel-registry.ts";
import type { Config } from "../config/schema.ts";
import type { GatewayContext } from "./context.ts";
import { PendingQuestions } from "./questions/questions.ts";
import { startControlSocket, type ControlSocket } from "./control/socket.ts";
import { refusePeer } from "./control/peer.ts";
import { DiskRetry } from "./upkeep/disk-retry.ts";
import { homePaths } from "../config/home.ts";
import { egressRules } from "../config/config.ts";
import { Inbox } from "./inbox.ts";
import { ensureHome } from "../config/init.ts";
import { LaneManager } from "./lanes.ts";
import { Outbox } from "./outbox.ts";
import { planRecovery, recoverInbox, stableAfterMs } from "./recovery.ts";
import { acquireLock, type GatewayLock } from "./upkeep/lock.ts";
import { LOG_KEEP, LOG_MAX_BYTES, startLogRotation } from "./upkeep/log-rotation.ts";
import { PairingStore } from "./access/pairing.ts";
import { PeopleRegistry } from "../people/registry.ts";
import { ChatAudiences } from "./access/audience.ts";
import { embeddingPricePerMillionTokens, localSearchPricePerThousand, pricingFor, speechPricePerMillionChars, transcriptionPricePerMinute } from "../spending/pricing.ts";
import { HeldReplies } from "./delivery/held-replies.ts";
import { openAnswerReply } from "./delivery/reply-files.ts";
import { speakerFor } from "./media/voice-replies.ts";
import { RecentChats, routeInbound, submitEntry } from "./router.ts";
import { createRunExecutor } from "./run-executor.ts";
import { createRpcHandler } from "./control/rpc.ts";
import { gatewayHost } from "./hosts/scheduler-host.ts";
import { BackupService } from "../backup/service.ts";
import { hearthVersion } from "../backup/naming.ts";
import type { Timers } from "../scheduler/engine.ts";
import { CronService } from "../scheduler/service.ts";
import { TaskService } from "../tasks/service.ts";
import { createTaskTools } from "../tasks/tools.ts";
import { gatewayTaskHost, isTaskEntry, openTaskDelivery } from "./hosts/task-host.ts";
import { ownerTarget, SessionStore } from "./sessions.ts";
import { gatewayStatus, type GatewayStatus } from "./status.ts";
import { Budget } from "../spending/budget.ts";
import { RateLimiter } from "../spending/rate-limit.ts";
import { UsageLedger } from "../spending/ledger.ts";
import { Reservations } from "../spending/reservations.ts";
import { holdPaidCall, reservePaidCall, type ReservePaidCall } from "./paid-calls.ts";
import { usageFile } from "../spending/usage-record.ts";
import { TerminalMailboxFile } from "./delivery/terminal-mailbox.ts";
import { Approvals } from "../approvals/service.ts";
import { AuditLog, connectionRecord } from "../approvals/audit.ts";
import { Egress } from "../egress/egress.ts";
import { approvalsHost } from "./hosts/approvals-host.ts";
import { notifyOwnerWithRaise, OwnerQuestions } from "./questions/owner-questions.ts";

export interface GatewayOptions {
  home: string;
  config: Config;
  log: Logger;
  /** Serve the control socket (the daemon); the embedded gateway of `hearth chat` does not. */
  controlSocket: boolean;
  /**
   * Chat channels to run besides the CLI, or a function that builds them (loaded lazily); its
   * `tellOwner` reaches the owner on another channel than `from` (ChannelDeps.tellOwner).
   */
  channels?: Channel[] | ((tellOwner: (from: ChannelId, text: string) => void) => Promise<Channel[]>);
  /** Opens the memory service; absent means no workspace memory (tests of the core only). */
  openMemory?: () => Promise<MemoryService>;
  /** Replaces the Anthropic client (tests, benchmarks). */
  model?: ModelClient;
  clock?: () => number;
  /** Run scheduled jobs and the heartbeat (the daemon). Without it jobs can still be managed. */
  schedule?: boolean;
  /** The scheduler's timers (tests and benchmarks pass fake ones). */
  timers?: Timers;
  /** Restart delays of MCP servers (tests shorten them). */
  mcpBackoff?: Partial<Backoff>;
  /**
   * Aborted when the process is asked to stop while starting: start-up stops at its next step,
   * undoes the steps done and throws StartupStopped. Once startGateway has returned, it is
   * no longer looked at: the caller stops the gateway.
   */
  stopSignal?: AbortSignal;
  /** How long the daemon must be up before a run counts as a crash trial (recovery.ts); default stableAfterMs(). */
  stableAfterMs?: number;
  /** The newest log lines, for the dashboard's Logs page (the daemon keeps them when the dashboard is enabled). */
  logTail?: LogTail;
}

/** Start-up was asked to stop (a signal while starting); what was started is stopped again. */
export class StartupStopped extends Error {
  constructor() {
    super("start-up stopped: the process was asked to stop");
    this.name = "StartupStopped";
  }
}

export interface Gateway {
  readonly cli: CliChannel;
  readonly context: GatewayContext;
  status(): GatewayStatus;
  /** Feeds a message in as if a channel delivered it. */
  deliver(m: InboundMessage): void;
  stop(): Promise<void>;
}

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const { config, home } = opts;
  const clock = opts.clock ?? Date.now;
  const paths = homePaths(home);
  const log = opts.log.child({ component: "gateway" });
  const undo: Array<[string, () => Promise<void> | void]> = [];
  // Between steps: a stop asked for while starting ends start-up there (before the lock, even).
  const continueUnlessStopped = () => {
    if (opts.stopSignal?.aborted) throw new StartupStopped();
  };

  try {
    continueUnlessStopped();
    // 1. The home folder and the lock: one gateway per home.
    ensureHome(home, { workspace: config.workspace });
    const lock: GatewayLock = acquireLock(paths.lock);
    undo.push(["lock", () => lock.release()]);

    // 2. The durable inbox and the outbox: compacted, with what a crash left unanswered.
    const { inbox, pending } = Inbox.open(paths.inbox, log, clock);
    const outbox = Outbox.open(paths.outbox, log, new Set(pending.map((e) => e.id)), clock);
    const stableMs = opts.stableAfterMs ?? stableAfterMs();
    const recovery = planRecovery(pending, outbox, stableMs);
    if (pending.length) {
      log.warn("inbox.recovering", { rerun: recovery.rerun.length, suspects: recovery.suspects.length, redeliver: recovery.redeliver.length, giveUp: recovery.giveUp.length, delivered: recovery.delivered.length });
    }
    // Set when recovery starts: a run counts as a crash trial only once the daemon has been up
    // for the stable time since then (recovery.ts).
    let upSince = Number.POSITIVE_INFINITY;

    continueUnlessStopped();

    // 3. Memory: the watcher, the search index, scoped context.
    const memory = opts.openMemory ? await opts.openMemory() : null;
    if (memory) undo.push(["memory", () => memory.close()]);
    continueUnlessStopped();

    // 3b. Extensions: the workspace's skills (kept fresh by the watcher) and the MCP servers,
    // which start in the background once the agent has swept what a killed daemon left.
    const skills = new SkillRegistry({ workspace: config.workspace, log: log.child({ component: "skills" }) });
    if (memory) undo.push(["skills feed", memory.onWorkspaceEvent((e) => skills.noteWorkspaceEvent(e.relPath))]);
    // A server that needs a login sends its link to the owner once the channels are up (ctx).
    let owner: GatewayContext | null = null;
    // The egress policy: every connection a command, web_fetch or a stdio MCP server makes is
    // decided there and written to the approvals' audit log.
    const audit = new AuditLog(join(home, "approvals.jsonl"), log.child({ component: "approvals" }));
    const egress = new Egress({ rules: () => egressRules(config), record: (r) => audit.append(connectionRecord(r, clock())), log: log.child({ component: "egress" }) });
    const mcp = new McpManager({
      config: config.mcp,
      log,
      markerPrefix: markerPrefixFor(home),
      authDir: paths.mcpAuth,
      workspace: config.workspace,
      notifyOwner: async (text) => (owner ? notifyOwner(owner, text) : log.warn("mcp.login_unsent", { reason: "the channels are not up yet" })),
      ...(opts.mcpBackoff ? { backoff: opts.mcpBackoff } : {}),
      // A stdio server runs in the exec sandbox behind the egress proxy (decided once the runtime
      // has probed the sandbox: the servers start after it). A connection the rules leave open is
      // the owner's to allow only under egress.ask "always": a server serves no run of its own.
      launch: sandboxedLauncher({
        sandbox: () => runtime.execSandbox,
        egress,
        optedOut: (name) => config.mcp.servers[name]?.sandbox === false,
        workspace: config.workspace,
        homeOf: (name) => join(paths.mcpHome, name),
        requester: (name) => ({
          what: `MCP server ${name}`,
          session: `mcp:${name}`,
          permit: async (dest, mode, signal) => {
            if (mode === "tainted") return null;
            const gate = owner?.approvals.gateFor({ sessionKey: `mcp:${name}`, scope: "main", chat: null, taintedBy: null });
            return gate?.permitConnection ? gate.permitConnection(dest, { what: `MCP server ${name}` }, mode, signal) : "nobody can be asked yet";
          },
        }),
      }),
    });
    undo.push(["mcp servers", () => mcp.stop()]);

    // 4. Sessions, pairing, the agent and the lanes.
    const sessions = SessionStore.open(paths.sessionsIndex, log, config.timezone, clock);
    undo.push(["sessions", () => sessions.flush()]);
    const pairing = PairingStore.open(paths.pairing, log, clock);
    const people = PeopleRegistry.open(paths.people, log, clock);
    const audiences = ChatAudiences.open(paths.audiences, log, clock);
    // A chat marked shared is nobody's private chat, also when the daemon died before the
    // owner's contact moved off it.
    const contact = sessions.ownerContact();
    if (contact && audiences.isShared(contact)) sessions.forgetOwnerContact();
    const rateLimits = new RateLimiter({ path: paths.rateLimits, log, clock });
    undo.push(["rate limits", () => rateLimits.flush()]);
    const cron = CronService.open({ paths, config, log: log.child({ component: "cron" }), clock, setAsideDamaged: true, ...(opts.timers ? { timers: opts.timers } : {}) });
    const usage = UsageLedger.open({ file: usageFile(home), timezone: config.timezone, pricing: pricingFor(config), transcriptionPerMinuteUsd: transcriptionPricePerMinute(config.media.transcription), speechPerMillionCharsUsd: speechPricePerMillionChars(config.voice.tts), embeddingPerMillionTokensUsd: embeddingPricePerMillionTokens(config.memory.embeddings), localSearchPerThousandUsd: localSearchPricePerThousand(config.tools.web.search), log: log.child({ component: "usage" }), clock });
    const recordUsage = usage.record.bind(usage);
    // Connections to tools.exec.hosts open on first use; the pool ends them all at shutdown.
    const execHosts = new SshHosts(config.tools.exec.hosts, { defaultKnownHostsFile: homePaths(home).knownHosts });
    undo.push(["exec hosts", () => execHosts.close()]);
    // Background tasks: their model calls count toward their cost cap as they are recorded, on
    // top of what the ledger holds from before this start.
    const tasks = new TaskService({ path: paths.tasks, config, log: log.child({ component: "tasks" }), clock, spentBefore: (session) => usage.spentBy(session) });
    usage.onRecord((r) => tasks.noteCost(r.session, r.costUsd));
    // Every paid call of a run is reserved first (paid-calls.ts); the reservations exist once the context does, before any run.
    const reserve: ReservePaidCall = (call) => reservePaidCall(ctx, call);
    const runtime = createAgentRuntime({ config, home, log, memory, skills, mcp, execHosts, egress, clock, extraTools: [...cron.tools(), ...createTaskTools(tasks)], recordUsage, reserve, ...(opts.model ? { model: opts.model } : {}) });
    mcp.start();
    const channels = new ChannelRegistry(log);
    const cli = new CliChannel({ mailbox: TerminalMailboxFile.open(paths.mailbox, log, config.timezone, clock()), clock });
    channels.register(cli);
    const chat = typeof opts.channels === "function" ? await opts.channels((from, text) => void (owner ? tellOwnerElsewhere(owner, from, text) : log.warn("owner.notice_unsent", { from, reason: "the channels are not up yet" }))) : (opts.channels ?? []);
    for (const ch of chat) channels.register(ch);

    const ctx = { config, home, log, clock, startedAt: clock(), inbox, outbox, sessions, pairing, people, audiences, channels, runtime, cron, tasks, recent: new RecentChats(), usage, rateLimits, questions: new PendingQuestions(channels, log.child({ component: "questions" })) } as GatewayContext;
    owner = ctx;
    // In the sandbox a command's connections are asked at the egress proxy, per destination.
    ctx.approvals = new Approvals({ config: { ...config.approvals, networkWalled: runtime.execSandbox.kind === "bwrap" }, home, host: approvalsHost(ctx), log: log.child({ component: "approvals" }), clock, audit });
    ctx.ownerQuestions = new OwnerQuestions(ctx);
    channels.onChoice((press) => (ctx.questions.has(press.key) ? ctx.questions.press(press) : ctx.ownerQuestions.has(press.key) ? ctx.ownerQuestions.press(press) : ctx.approvals.press(press)));
    ctx.budget = new Budget({ config: config.budget, ledger: usage, home, log: log.child({ component: "budget" }), notifyOwner: (text) => notifyOwner(ctx, text, { raise: true }) });
    ctx.reservations = new Reservations({ budget: ctx.budget, ledger: usage });
    ctx.speakerFor = (entry, scope) => speakerFor(ctx, entry, scope);
    const embeddingModel = config.memory.embeddings?.model;
    if (memory && embeddingModel) {
      // Background work for the owner's memory: metered under its own session, and held by the
      // budget like a scheduled job's calls. No text is longer in tokens than in UTF-8 bytes.
      const tag = { session: "memory", scope: "main", purpose: "cron" } as const;
      const perToken = embeddingPricePerMillionTokens(config.memory.embeddings) / 1_000_000;
      memory.setEmbeddingHooks({
        reserve: (texts) =>
          holdPaidCall<number>(reserve, { kind: "embedding", sessionKey: tag.session, scope: tag.scope, purpose: tag.purpose, worstUsd: texts.reduce((n, t) => n + Buffer.byteLength(t), 0) * perToken }, (tokens) =>
            usage.recordEmbedding(tag, embeddingModel, tokens),
          ),
      });
    }
    // Messages kept when the disk was full run again once it has space (disk-retry.ts).
    const diskRetry = new DiskRetry({ home, log, resubmit: (ids) => inbox.pending().filter((e) => ids.includes(e.id)).forEach((e) => submitEntry(ctx, e)) });
    undo.push(["disk retry", () => diskRetry.stop()]);
    // An answer whose channel is not connected waits for it, its entry open (delivery/held-replies.ts).
    const held = new HeldReplies({
      outbox,
      entry: (id) => inbox.get(id),
      // A "done" record that cannot be written (disk full) must not take the lanes down.
      markDone: (id) => bestEffort(log, "inbox.done_write_failed", id, () => inbox.markDone(id)),
      status: (id) => (channels.get(id) ? channels.status(id) : undefined),
      openReply: (to, journal) => (isTaskEntry(ctx, journal.key) ? openTaskDelivery(ctx, to, journal) : openAnswerReply(ctx, to, journal)),
      tellOwner: (from, text) => void tellOwnerElsewhere(ctx, from, text),
      log,
    });
    undo.push(["held answers", () => held.stop()]);
    ctx.lanes = new LaneManager({
      execute: createRunExecutor(ctx),
      maxConcurrentRuns: config.agent.maxConcurrentRuns,
      onItemsDone: (ids) => held.runEnded(ids),
      onItemsKept: (ids) => diskRetry.keep(ids),
      onItemsAbandoned: (ids, reason) => ids.forEach((id) => bestEffort(log, "inbox.abandoned_write_failed", id, () => inbox.markAbandoned(id, reason))),
      // A lost "started" record costs at most one uncounted attempt: never fail a run over it.
      onItemsStarted: (ids, isolated) => {
        const trial = isolated && ids.length === 1 && clock() - upSince >= stableMs;
        ids.forEach((id) => bestEffort(log, "inbox.started_write_failed", id, () => inbox.markStarted(id, trial)));
      },
      onReplyJoined: (owner, id) => {
        if (inbox.get(owner) && inbox.get(id)) outbox.recordJoined(owner, id);
      },
      log: log.child({ component: "lanes" }),
      // Longer than any single silence a healthy run has (a command, a stalled model attempt):
      // the model client bounds stalls itself and says so better than the watchdog can.
      inactivityLimitMs: Math.max(config.tools.exec.timeoutMs, config.model.idleTimeoutMs, 120_000) + 60_000,
      clock,
    });

    // 5. The scheduler (cron jobs, heartbeat): connected now, started once the channels are up.
    cron.attach(gatewayHost(ctx));
    undo.push(["scheduler", () => cron.stop()]);
    // 5b. Background tasks: each an inbox entry on a lane of its own (tasks/service.ts).
    tasks.attach(gatewayTaskHost(ctx));

    continueUnlessStopped();
    // 6a. The dashboard (daemon only, when enabled): its pages load on the first request.
    if (opts.controlSocket && config.dashboard.enabled) {
      const { startDashboard } = await import("../dashboard/server.ts");
      const { dashboardHost } = await import("./hosts/dashboard-host.ts");
      const d = config.dashboard;
      ctx.dashboard = await startDashboard({ host: d.host, port: d.port, allowRemote: d.allowRemote, log: log.child({ component: "dashboard" }), openHost: () => dashboardHost(ctx, cli, opts.logTail) });
      undo.push(["dashboard", () => ctx.dashboard?.close()]);
    }

    // 6. The control socket for `hearth chat`, `hearth status` and friends.
    if (opts.controlSocket) {
      const control: ControlSocket = await startControlSocket(
        paths.socket,
        cli,
        { abort: () => ctx.lanes.stop("main"), status: () => gatewayStatus(ctx), rpc: createRpcHandler(ctx), guard: (socket) => refusePeer(socket, markerPrefixFor(home)) },
        log.child({ component: "control" }),
      );
      undo.push(["control socket", () => control.close()]);
    }

    // 7. Channels, then what the inbox had left: replies need their channel running.
    // The promise settles once the message is on disk (attachments downloaded): a channel may wait for it.
    const onMessage = (m: InboundMessage): Promise<void> => routeInbound(ctx, m);
    continueUnlessStopped();
    await channels.startAll(onMessage, { onCommand: (c) => void routePlatformCommand(ctx, c) });
    undo.push(["channels", () => channels.stopAll()]);
    continueUnlessStopped();
    // Undone first: new messages still reach the inbox (and run after a restart) while the
    // active runs finish and their replies go out on channels that are still up.
    undo.push(["runs", () => ctx.lanes.drain(config.agent.shutdownGraceMs)]);
    // Undone before the runs drain: a task stopped by the shutdown is interrupted, not ended.
    undo.push(["tasks", () => tasks.pause()]);
    upSince = clock();
    // Questions a previous process left open lose their buttons; their runs ask again below.
    void ctx.approvals.retireLeftovers();
    // Tasks first: one whose entry a shutdown closed gets a new one; open ones recovery reruns.
    tasks.start((entryId) => inbox.get(entryId) !== undefined);
    const recovering = recoverInbox(recovery, {
      inbox,
      outbox,
      log,
      openReply: (to, journal) => (journal ? (isTaskEntry(ctx, journal.key) ? openTaskDelivery(ctx, to, journal) : openAnswerReply(ctx, to, journal)) : channels.openReply(to)),
      rerun: (entry, alone) => submitEntry(ctx, entry, alone),
      // A task cut off by a crash continues from its transcript (tasks/service.ts); given up
      // (recovery's notice tells its chat), it ends as failed, never to run again.
      withdrawTurns: (entry, note) => {
        if (!entry.sessionKey.startsWith("task:")) return runtime.withdrawTurns(entry.sessionKey, entry.id, note);
        if (note !== undefined) tasks.giveUp(entry.sessionKey);
      },
      later: (ms, fn) => {
        const timer = setTimeout(fn, ms);
        return () => clearTimeout(timer);
      },
      redeliver: (reply, entries, to) => held.redeliver(reply, entries, to),
    });
    undo.push(["suspect retries", () => recovering.cancel()]);
    if (opts.schedule) {
      // The daemon's own log files stay bounded, whoever appends to them (upkeep/log-rotation.ts).
      const stopRotation = startLogRotation({ dir: join(home, "logs"), maxBytes: LOG_MAX_BYTES, keep: LOG_KEEP, log: log.child({ component: "logs" }) });
      undo.push(["log rotation", async () => stopRotation()]);
      await cron.startEngine();
      // Undone first of all: no new job or heartbeat starts while the runs drain.
      undo.push(["scheduler timers", () => cron.pause()]);
      if (config.backup) {
        const backups = new BackupService({ home, config: config.backup, hearth: hearthVersion(), host: { tellOwner: (text) => notifyOwner(ctx, text) }, log: log.child({ component: "backup" }), clock });
        backups.start();
        undo.push(["backups", () => backups.stop()]);
      }
    }

    continueUnlessStopped();
    const notRunning = Object.fromEntries(channels.ids().flatMap((id) => {
      const s = channels.status(id);
      return s.state === "failed" ? [[id, s.reason]] : [];
    }));
    log.info("gateway.ready", { home, channels: channels.ids(), ...(Object.keys(notRunning).length ? { notRunning } : {}), pid: process.pid });
    // 8. Background work that must not delay readiness: the watcher's first scan of the
    // workspace and the search index build. Skills are read again once the watcher covers
    // their folder, for an edit made before it did.
    if (memory) {
      memory.startBackground();
      void memory.watching().then(() => skills.reload());
    }
    let stopping: Promise<void> | null = null;
    return {
      cli,
      context: ctx,
      status: () => gatewayStatus(ctx),
      deliver: onMessage,
      stop: () => (stopping ??= unwind(undo, log)),
    };
  } catch (err) {
    await unwind(undo, log);
    // A bare "ENOSPC: no space left on device, write" does not say which disk, or what to do.
    throw isDiskFull(err) ? new DiskFullError(home, err) : err;
  }
}

/** An inbox record that cannot be written (disk full) is logged; the message stays open until the next start. */
function bestEffort(log: Logger, event: string, id: string, write: () => void): void {
  try {
    write();
  } catch (err) {
    log.error(event, { id, error: err, action: "the message stays open in the inbox until the next start" });
  }
}

/**
 * A proactive message to the owner's most recently used chat; failures are logged. `raise`: a
 * budget notice, which comes with a button that raises today's limit where the chat has buttons.
 */
async function notifyOwner(ctx: GatewayContext, text: string, opts: { raise?: boolean } = {}): Promise<void> {
  const to = ownerTarget(ctx.sessions);
  try {
    if (opts.raise && (await notifyOwnerWithRaise(ctx, to, text))) return;
    await ctx.channels.send(to, text, { from: "Hearth" });
  } catch (err) {
    ctx.log.warn("owner.notice_undelivered", { channel: to.channel, error: err });
  }
}

/**
 * A notice about channel `from` (its device logged out) on another channel: the owner's latest
 * chat when it is elsewhere, else their private chat on the first other running channel that
 * names one, else the terminal's mailbox. Failures are logged.
 */
async function tellOwnerElsewhere(ctx: GatewayContext, from: ChannelId, text: string): Promise<void> {
  const privates = CONFIGURABLE.flatMap((c): DeliveryTarget[] => {
    const chat = ownerPrivateChat(ctx.config.channels, c.id);
    return chat ? [chat] : [];
  });
  const targets = [ownerTarget(ctx.sessions), ...privates].filter((t) => t.channel !== from && t.channel !== "cli" && ctx.channels.status(t.channel).state === "running");
  for (const to of [...targets, CLI_TARGET]) {
    try {
      await ctx.channels.send(to, text, { from: "Hearth" });
      return;
    } catch (err) {
      ctx.log.warn("owner.notice_undelivered", { channel: to.channel, error: err });
    }
  }
}

/** Runs the undo steps in reverse order; each step is isolated and logged. */
async function unwind(undo: Array<[string, () => Promise<void> | void]>, log: Logger): Promise<void> {
  for (const [name, step] of undo.reverse()) {
    try {
      await step();
      log.debug("gateway.stopped_step", { step: name });
    } catch (err) {
      log.error("gateway.stop_failed", { step: name, error: err });
    }
  }
  log.info("gateway.stopped");
}
