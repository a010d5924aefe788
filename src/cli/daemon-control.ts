// `hearth stop`, `hearth restart` and `hearth logs [-f]`, whether the daemon runs under pm2 or
// in a terminal. The gateway lock names the running daemon; /proc tells whether pm2 started it
// (pm2 sets `pm_id` in its apps' environment). Under pm2 these call pm2, which would otherwise
// restart a daemon that was stopped behind its back; in a terminal they signal the daemon (a
// SIGTERM is its clean shutdown), and `restart` starts the new one in the background with its
// log in the same file pm2 uses, `<home>/logs/hearth.err.log`.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, createReadStream, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../config/config.ts";
import { homePaths } from "../config/home.ts";
import { isSameProcess, liveHolder, type LockRecord } from "../gateway/lock.ts";
import { hearthCmd } from "../hearth-command.ts";
import type { Io } from "../cli.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pm2Bin = path.join(root, "node_modules", ".bin", "pm2");

/** The daemon's log file when it runs under pm2 or was restarted by `hearth restart`. */
export const logFile = (home: string): string => path.join(home, "logs", "hearth.err.log");

const say = (io: Io, line: string) => io.stdout.write(`${line}\n`);

/** Whether pm2 started `pid` (its environment holds pm2's `pm_id`). */
function underPm2(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").some((v) => v.startsWith("pm_id="));
  } catch {
    return false;
  }
}

function pm2(args: string[], home: string): boolean {
  return spawnSync(pm2Bin, args, { cwd: root, env: { ...process.env, HEARTH_HOME: home }, stdio: ["ignore", "ignore", "inherit"] }).status === 0;
}

/** How long a clean stop may take: running answers get agent.shutdownGraceMs, then everything closes. */
function stopLimitMs(home: string): number {
  try {
    return loadConfig({ home }).agent.shutdownGraceMs + 20_000;
  } catch {
    return 30_000;
  }
}

async function waitGone(holder: LockRecord, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (isSameProcess(holder)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

export async function runStop(home: string, io: Io): Promise<number> {
  const holder = liveHolder(homePaths(home).lock);
  if (!holder) {
    say(io, "Hearth is not running.");
    return 0;
  }
  if (underPm2(holder.pid)) {
    if (!pm2(["stop", "hearth"], home)) return failed(io, `pm2 could not stop it; try: npx pm2 stop hearth (in ${root})`);
  } else {
    process.kill(holder.pid, "SIGTERM");
  }
  if (!(await waitGone(holder, stopLimitMs(home)))) return failed(io, `pid ${holder.pid} is still stopping; its log says why`);
  say(io, `Stopped Hearth (pid ${holder.pid}).`);
  return 0;
}

export async function runRestart(home: string, io: Io): Promise<number> {
  const holder = liveHolder(homePaths(home).lock);
  if (holder && underPm2(holder.pid)) {
    if (!pm2(["restart", "hearth", "--update-env"], home)) return failed(io, `pm2 could not restart it; try: npx pm2 restart hearth --update-env (in ${root})`);
    say(io, `Restarted Hearth under pm2 (it was pid ${holder.pid}).`);
    return 0;
  }
  if (holder) {
    process.kill(holder.pid, "SIGTERM");
    if (!(await waitGone(holder, stopLimitMs(home)))) return failed(io, `pid ${holder.pid} is still stopping; its log says why`);
  }
  const file = logFile(home);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, "a", 0o600);
  const child = spawn(process.execPath, [...process.execArgv, path.join(root, "bin", "hearth.js"), "start"], {
    cwd: root,
    env: { ...process.env, HEARTH_HOME: home },
    detached: true,
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  child.unref();
  const started = await waitStarted(home, child.pid!);
  if (!started) return failed(io, `the new daemon did not start; see ${file} (\`${hearthCmd("logs")}\`)`);
  say(io, `${holder ? "Restarted" : "Started"} Hearth in the background (pid ${started.pid}); its log: ${file}`);
  return 0;
}

/** The new daemon's lock record once it holds the lock (start-up can take seconds), or null if it exited. */
async function waitStarted(home: string, spawned: number): Promise<LockRecord | null> {
  const lock = homePaths(home).lock;
  for (;;) {
    const holder = liveHolder(lock);
    if (holder) return holder;
    try {
      process.kill(spawned, 0);
    } catch {
      return null;
    }
    await sleep(100);
  }
}

/** pm2 splits the log: info lines in hearth.out.log, warnings and errors in hearth.err.log. */
const logFiles = (home: string): string[] => [path.join(home, "logs", "hearth.out.log"), logFile(home)];

/** The lines of the log files, merged by their time ("t"; a line without one follows the line before it). */
function mergedLines(files: string[]): string[] {
  const all: { t: string; i: number; line: string }[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    let t = "";
    for (const line of text.split("\n")) {
      if (!line) continue;
      const m = /^\{"t":"([^"]+)"/.exec(line);
      if (m) t = m[1]!;
      all.push({ t, i: all.length, line });
    }
  }
  return all.sort((x, y) => (x.t < y.t ? -1 : x.t > y.t ? 1 : x.i - y.i)).map((l) => l.line);
}

export async function runLogs(home: string, io: Io, opts: { follow: boolean; lines: number }): Promise<number> {
  const files = logFiles(home);
  const sizes = files.map((f) => sizeOf(f));
  if (sizes.every((s) => s === null)) {
    const holder = liveHolder(homePaths(home).lock);
    return failed(io, `no log file at ${logFile(home)}: ${holder ? `Hearth (pid ${holder.pid}) logs to the terminal it was started in` : "Hearth has not run under pm2 or \`hearth restart\` yet"}`);
  }
  io.stdout.write(mergedLines(files).slice(-opts.lines).map((l) => `${l}\n`).join(""));
  if (!opts.follow) return 0;
  // Follows the files as they grow (from the start when pm2 rotates one) until Ctrl+C.
  for (;;) {
    await sleep(500);
    for (const [i, file] of files.entries()) {
      const now = sizeOf(file);
      if (now === null) continue;
      let from = sizes[i] ?? 0;
      if (now < from) from = 0;
      if (now > from) for await (const chunk of createReadStream(file, { start: from, end: now - 1 })) io.stdout.write(chunk);
      sizes[i] = now;
    }
  }
}

function sizeOf(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}

function failed(io: Io, problem: string): number {
  io.stderr.write(`hearth: ${problem}\n`);
  return 1;
}
