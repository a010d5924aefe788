// Costs that must stay flat as use grows (issue 19): the daily log's per-message cost at 100,
// 1,000 and 5,000 messages in a day; start to ready with a 10,000-file workspace on a cold
// index (and disk use during its build); `hearth status` against a running daemon.
import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { silentLogger } from "../src/process/log.ts";
import { formatExchange } from "../src/memory/daily-log.ts";
import { openMemory } from "../src/memory/memory.ts";
import { measure, percentile, round, type Figure } from "./harness.ts";
import { DAEMON_ENV } from "../src/process/daemon-env.ts";
import { daemonNodeArgs } from "./support/daemon-args.ts";
import { startZeroModel } from "./support/zero-model.ts";

const execFileAsync = promisify(execFile);
const root = fileURLToPath(new URL("../", import.meta.url));
const bin = join(root, "bin", "hearth.js");
const NOW = Date.UTC(2026, 10, 23, 12);
const USER_TEXT = "please remind me about the garden and the plans for the weekend, ".repeat(6);
const REPLY_TEXT = "Sure: the garden needs water on Saturday and the plans are on the list. ".repeat(10);

const exchange = (n: number) => ({ at: NOW, channel: "cli", sender: "Owner", userText: `${n} ${USER_TEXT}`, replyText: REPLY_TEXT });
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * CPU per exchange spent by the memory service (the append, its indexing, and whatever the
 * watcher's event for it costs), with `messages` exchanges already in today's log, minus the
 * same wait without an append.
 */
export async function perMessageMs(messages: number): Promise<number> {
  const base = mkdtempSync(join(tmpdir(), "hearth-bench-log-"));
  const workspace = join(base, "workspace");
  mkdirSync(join(workspace, "memory"), { recursive: true });
  const header = "# 2026-11-23\n\n";
  const entries = Array.from({ length: messages }, (_, n) => formatExchange(exchange(n), "UTC"));
  writeFileSync(join(workspace, "memory", "2026-11-23.md"), header + entries.join(""));
  // With the memory history, as the daemon runs it: its note of each append once copied the whole day's file.
  const memory = await openMemory({ workspace, indexPath: join(base, "index", "memory.db"), historyDir: join(base, "history.git"), timezone: "UTC", log: silentLogger, clock: () => NOW, restoreWorkspace: () => {} });
  memory.startBackground();
  try {
    // The background index build (and the history's first commit) done before the idle baseline:
    // a build still running then made "idle" busier than the appends, and the figure 0.
    await memory.watching();
    await sleep(1500);
    const settle = 400; // the watcher's settle time is 200 ms
    const rounds = 15;
    let idle = cpuMs();
    for (let i = 0; i < rounds; i++) await sleep(settle);
    idle = cpuMs() - idle;
    let busy = cpuMs();
    for (let i = 0; i < rounds; i++) {
      memory.logExchange({ kind: "main" }, exchange(messages + i));
      await sleep(settle);
    }
    busy = cpuMs() - busy;
    return Math.max(0, (busy - idle) / rounds);
  } finally {
    await memory.close();
    rmSync(base, { recursive: true, force: true });
  }
}

const env = (home: string, modelUrl: string, log = "warn") => ({ ...process.env, ...DAEMON_ENV, HEARTH_HOME: home, ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: modelUrl, HEARTH_LOG: log });

interface Started {
  ms: number;
  stop: () => Promise<void>;
  /** Resolves when the daemon logged that the index build finished. */
  indexReady: Promise<void>;
}

function startDaemon(home: string, modelUrl: string): Promise<Started> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...daemonNodeArgs(), bin, "start"], { env: env(home, modelUrl, "info"), stdio: ["ignore", "ignore", "pipe", "ipc"] });
    let log = "";
    let onIndex: () => void = () => {};
    const indexReady = new Promise<void>((r) => (onIndex = r));
    child.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes("memory.index_ready")) onIndex();
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`hearth start exited with ${code} before ready:\n${log}`)));
    child.on("message", (m) => {
      if (m !== "ready") return;
      child.removeAllListeners("exit");
      resolve({ ms: performance.now() - t0, indexReady, stop: () => new Promise<void>((r) => (child.once("exit", () => r()), child.kill("SIGTERM"))) });
    });
  });
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir, { withFileTypes: true, recursive: true } as never) as unknown as Array<{ name: string; parentPath: string; isFile(): boolean }>) {
    if (name.isFile()) total += statSync(join(name.parentPath, name.name), { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

/** Ready times with an empty workspace and with 10,000 files (12 MB) on a cold index. */
export async function startWithBigWorkspace(modelUrl: string): Promise<Figure[]> {
  const empty = mkdtempSync(join(tmpdir(), "hearth-bench-empty-"));
  const big = mkdtempSync(join(tmpdir(), "hearth-bench-big-"));
  try {
    await (await startDaemon(empty, modelUrl)).stop(); // compile cache
    const emptyTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await startDaemon(empty, modelUrl);
      emptyTimes.push(d.ms);
      await d.stop();
    }
    const note = "- a note about the garden, the weekend and the plans we made together\n".repeat(17);
    for (let d = 0; d < 100; d++) {
      const dir = join(big, "workspace", "notes", `d${d}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(join(dir, `n${f}.md`), `# Note ${d}-${f}\n\n${note}`);
    }
    const d = await startDaemon(big, modelUrl);
    let peak = 0;
    const index = join(big, "index");
    const poll = setInterval(() => (peak = Math.max(peak, dirBytes(index))), 20);
    await d.indexReady;
    clearInterval(poll);
    await d.stop();
    const final = dirBytes(index);
    emptyTimes.sort((a, b) => a - b);
    const emptyMs = percentile(emptyTimes, 50);
    return [
      { name: "start to ready, empty workspace (p50 of 3)", value: round(emptyMs, 0), unit: "ms", target: 500 },
      { name: "start to ready, 10,000-file workspace, cold index", value: round(d.ms, 0), unit: "ms", target: round(2 * emptyMs, 0) },
      { name: "index disk during the first build, peak / final", value: round(peak / final, 2), unit: "x", target: 1.5 },
    ];
  } finally {
    rmSync(empty, { recursive: true, force: true });
    rmSync(big, { recursive: true, force: true });
  }
}

/** `hearth status` with a daemon running, and `node -e 0` for the floor. */
export async function statusTime(modelUrl: string): Promise<Figure[]> {
  const home = mkdtempSync(join(tmpdir(), "hearth-bench-status-"));
  const d = await startDaemon(home, modelUrl);
  try {
    const e = env(home, modelUrl);
    await execFileAsync(process.execPath, [bin, "status"], { env: e });
    const status = await measure(15, () => execFileAsync(process.execPath, [bin, "status"], { env: e }));
    const floor = await measure(15, () => execFileAsync(process.execPath, ["-e", "0"]));
    const s = percentile(status, 50);
    const f = percentile(floor, 50);
    return [
      { name: "hearth status, daemon running (p50 of 15)", value: round(s, 0), unit: "ms", target: 80 },
      { name: "node -e 0 (p50 of 15)", value: round(f, 0), unit: "ms", target: 80 },
      { name: "hearth status / node -e 0", value: round(s / f, 2), unit: "x", target: 3 },
    ];
  } finally {
    await d.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/** 5,000 group chats speak once, then 31 idle minutes on a simulated clock (its own process). */
export async function manySessions(chats = 5000): Promise<Figure[]> {
  // With the daemon's own node arguments (package.json config.daemonNodeArgs).
  const { stdout } = await execFileAsync(process.execPath, ["--expose-gc", ...daemonNodeArgs(), join(root, "bench", "support", "sessions-child.ts"), String(chats)], { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split("\n").at(-1)!) as { idle: number; busy: number; after: number; held: number; released: number; watchedAtFew: number; watchedAtMany: number; heapIdle: number; heapAfter: number };
  return [
    { name: `RSS after ${chats} chats spoke once, minus idle`, value: round(r.busy - r.idle, 1), unit: "MB", target: 1000 },
    { name: `RSS after they idled 31 min and were released, minus idle`, value: round(r.after - r.idle, 1), unit: "MB", target: 30 },
    { name: `JS heap in use after release, minus idle`, value: round(r.heapAfter - r.heapIdle, 1), unit: "MB", target: 30 },
    { name: `sessions held in memory at the peak (cap 500)`, value: r.held, unit: "", target: 501 },
    { name: `watched folders with ${chats} chats / with 20`, value: round(r.watchedAtMany / Math.max(1, r.watchedAtFew), 2), unit: "x", target: 1.01 },
  ];
}

/** The first load of a 100,000-message transcript with a compaction 100 messages before its end. */
export async function bigTranscript(srcRoot = root): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-transcript-"));
  const file = join(dir, "main.jsonl");
  try {
    const lines: string[] = [JSON.stringify({ type: "session", version: 1, key: "main", ts: 1 })];
    const usage = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheCreationTokens: 0 };
    const message = (i: number) =>
      i % 2 === 0
        ? { role: "user", kind: "message", text: `message ${i}: what about the garden this weekend?`, ts: i }
        : { role: "assistant", content: [{ type: "text", text: `answer ${i}: water it on Saturday morning, and the plans are on the list.` }], stop: "end_turn", model: "m", usage, ts: i };
    const total = 100_000;
    for (let i = 0; i < total; i++) {
      if (i === total - 100) {
        lines.push(JSON.stringify({ type: "compaction", reason: "threshold", messages: [{ role: "user", kind: "system", text: "Summary: a long talk about the garden.", ts: i }], summarized: true, tokensBefore: 150000, tokensAfter: 3000, ts: i }));
      }
      lines.push(JSON.stringify({ type: "message", message: message(i) }));
    }
    writeFileSync(file, `${lines.join("\n")}\n`);
    const { stdout } = await execFileAsync(process.execPath, [join(root, "bench", "support", "transcript-child.ts"), srcRoot, file]);
    const r = JSON.parse(stdout) as { ms: number; rssMb: number; view: number };
    return [
      { name: "first load of a 100k-message transcript, compaction near the end", value: round(r.ms, 1), unit: "ms", target: 100 },
      { name: "RSS after that load", value: round(r.rssMb, 1), unit: "MB", target: 150 },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function scaleBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const perMessage: number[] = [];
  for (const n of [100, 1000, 5000]) {
    const ms = await perMessageMs(n);
    perMessage.push(ms);
    figures.push({ name: `memory per message, ${n} messages in the day (CPU)`, value: round(ms, 2), unit: "ms", target: 20 });
  }
  figures.push({ name: "memory per message, 5,000 / 100 messages", value: round(perMessage[2]! / Math.max(perMessage[0]!, 0.5), 2), unit: "x", target: 2 });
  figures.push(...(await bigTranscript()));
  figures.push(...(await manySessions()));
  const model = await startZeroModel("ok");
  try {
    figures.push(...(await statusTime(model.url)));
    figures.push(...(await startWithBigWorkspace(model.url)));
  } finally {
    await model.close();
  }
  return figures;
}
