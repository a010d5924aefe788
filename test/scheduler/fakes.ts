// Fakes for scheduler tests: a clock with timers that only move when told, a host that records
// what the scheduler submits and sends, and a CronService on a temp home built from them.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DeliveryTarget, ReplyOutcome } from "../../src/channels/channel.ts";
import type { ChatPlace } from "../../src/channels/chat-place.ts";
import { parseConfig } from "../../src/config/config.ts";
import { homePaths } from "../../src/config/home.ts";
import type { LaneItem } from "../../src/gateway/lane-item.ts";
import type { Timers } from "../../src/scheduler/engine.ts";
import type { BudgetDecision } from "../../src/spending/budget.ts";
import type { HostDelivery, SchedulerHost } from "../../src/scheduler/host.ts";
import type { RunRecord } from "../../src/scheduler/run-log.ts";
import { CronService } from "../../src/scheduler/service.ts";
import { createLogger, type Logger } from "../../src/process/log.ts";

/** Time stands still until `advanceTo`/`advance` moves it, firing due timers in order. */
export class FakeTime implements Timers {
  now: number;
  #timers: Array<{ at: number; fn: () => void; id: number }> = [];
  #seq = 0;

  constructor(start: number | string) {
    this.now = typeof start === "string" ? Date.parse(start) : start;
  }

  readonly clock = (): number => this.now;

  set(ms: number, fn: () => void): () => void {
    const id = ++this.#seq;
    this.#timers.push({ at: this.now + Math.max(0, ms), fn, id });
    return () => {
      this.#timers = this.#timers.filter((t) => t.id !== id);
    };
  }

  advance(ms: number): void {
    this.advanceTo(this.now + ms);
  }

  advanceTo(target: number | string): void {
    const end = typeof target === "string" ? Date.parse(target) : target;
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.#timers[0];
      if (!next || next.at > end) break;
      this.#timers.shift();
      this.now = Math.max(this.now, next.at);
      next.fn();
    }
    this.now = Math.max(this.now, end);
  }

  pending(): number {
    return this.#timers.length;
  }
}

export interface Submitted {
  sessionKey: string;
  item: LaneItem;
  at: number;
}

/** Records submits and sends; runs nothing by itself (tests finish items with `answer`). */
export class FakeHost implements SchedulerHost {
  readonly submitted: Submitted[] = [];
  readonly sent: Array<{ to: DeliveryTarget; text: string }> = [];
  /** What each send named as its sender (the terminal's mailbox labels letters with it). */
  readonly senders: string[] = [];
  busy = false;
  owner: DeliveryTarget = { channel: "telegram", chatId: "100" };
  origin: DeliveryTarget | null = { channel: "telegram", chatId: "100" };
  /** Sends to these chat ids fail. */
  readonly unreachable = new Set<string>();
  readonly #time: FakeTime;

  constructor(time: FakeTime) {
    this.#time = time;
  }

  submit(sessionKey: string, item: LaneItem): void {
    this.submitted.push({ sessionKey, item, at: this.#time.now });
  }
  mainBusy(): boolean {
    return this.busy;
  }
  async send(to: DeliveryTarget, text: string, from: string): Promise<HostDelivery> {
    if (this.unreachable.has(to.chatId)) throw new Error(`chat ${to.chatId} is unreachable`);
    this.sent.push({ to, text });
    this.senders.push(from);
    return { type: "delivered", to };
  }
  ownerTarget(): DeliveryTarget {
    return this.owner;
  }
  originOf(sessionKey: string): DeliveryTarget | null {
    return sessionKey === "main" ? this.origin : null;
  }
  /** What the budget answers. */
  budgetAllows = true;
  ownerAt: number | null = null;
  /** null: no watcher. */
  changedAt: number | null = null;
  /** Texts added to main's transcript. */
  readonly inMain: string[] = [];
  checkBudget(): BudgetDecision {
    return this.budgetAllows ? { type: "allow" } : { type: "refuse", limit: "daily", reason: "the daily budget is spent" };
  }
  ownerMessageAt(): number | null {
    return this.ownerAt;
  }
  workspaceChangedAt(): number | null {
    return this.changedAt;
  }
  recordInMain(text: string): void {
    this.inMain.push(text);
  }
  /** Session → the outside content its view holds (a tainted answer's session). */
  readonly outside = new Map<string, string>();
  outsideContent(sessionKey: string): string | null {
    return this.outside.get(sessionKey) ?? null;
  }
  /**
   * Whose chat each `channel:chatId` is; any other is the owner's (the tests' chats are, unless
   * a test says otherwise).
   */
  readonly places = new Map<string, ChatPlace>();
  placeOf(to: DeliveryTarget): ChatPlace {
    return this.places.get(`${to.channel}:${to.chatId}`) ?? { type: "owner" };
  }
  /** Tasks started by jobs with `task: true`. */
  readonly tasks: Array<Parameters<NonNullable<SchedulerHost["spawnTask"]>>[0]> = [];
  spawnTask(t: Parameters<NonNullable<SchedulerHost["spawnTask"]>>[0]): string {
    this.tasks.push(t);
    return `t${this.tasks.length}`;
  }
}

/** Runs a submitted item the way a lane does: opens its reply when the run starts, then finishes it. */
export async function answer(s: Submitted, text: string, outcome: ReplyOutcome = "answered"): Promise<void> {
  await s.item.openReply().finish(text, outcome);
}

/** A logger that keeps every line (JSON) for assertions. */
export function recordingLogger(): { log: Logger; lines: string[]; events: (name: string) => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l), isTTY: false } });
  const events = (name: string) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.event === name);
  return { log, lines, events };
}

export interface Harness {
  home: string;
  time: FakeTime;
  host: FakeHost;
  cron: CronService;
  logs: ReturnType<typeof recordingLogger>;
  /** Stops this service and opens a new one on the same home at the same time (a restart). */
  restart(opts?: { at?: number | string; host?: FakeHost }): Promise<void>;
  runs(): RunRecord[];
  jobsFile(): string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  start: string | number;
  timezone?: string;
  heartbeat?: { every: string; activeHours?: { start: string; end: string } };
  workspace?: string;
  minEveryMs?: number;
}

/** A started CronService on a fresh home, with fake time and a fake host. */
export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const home = mkdtempSync(join(tmpdir(), "hearth-cron-"));
  const paths = homePaths(home);
  const config = parseConfig(
    {
      timezone: opts.timezone ?? "UTC",
      heartbeat: opts.heartbeat ?? { every: "0" },
      ...(opts.workspace ? { workspace: opts.workspace } : {}),
    },
    { home, env: {} },
  );
  const time = new FakeTime(opts.start);
  const logs = recordingLogger();
  const open = async (host: FakeHost) => {
    const cron = CronService.open({ paths, config, log: logs.log, clock: time.clock, timers: time, ...(opts.minEveryMs ? { minEveryMs: opts.minEveryMs } : {}) });
    cron.attach(host);
    await cron.startEngine();
    return cron;
  };
  const h: Harness = {
    home,
    time,
    host: new FakeHost(time),
    cron: undefined as unknown as CronService,
    logs,
    async restart(o = {}) {
      await h.cron.stop();
      if (o.at !== undefined) time.advanceTo(o.at);
      h.host = o.host ?? new FakeHost(time);
      h.cron = await open(h.host);
    },
    runs: () => {
      try {
        return readFileSync(paths.runs, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as RunRecord);
      } catch {
        return [];
      }
    },
    jobsFile: () => readFileSync(paths.jobs, "utf8"),
    async close() {
      await h.cron.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
  h.cron = await open(h.host);
  return h;
}
