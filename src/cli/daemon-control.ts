// `hearth stop`, `hearth restart`, a terminal's `hearth start` when a supervisor has Hearth, and
// `hearth logs [-f]`. Each acts through the supervisor that runs Hearth for the home
// (supervisor.ts: pm2, the systemd unit, or none) and says which: pm2 or systemd would otherwise
// restart a daemon stopped behind their back, or keep one started behind it listed as stopped.
// Without a supervisor `stop` sends SIGTERM (the daemon's clean shutdown) and `restart` starts
// the new daemon in the background, its log split as pm2 splits it: info lines in
// `<home>/logs/hearth.out.log`, warnings and errors in `hearth.err.log`.
import { DAEMON_ENV } from "../process/daemon-env.ts";
import { spawn } from "node:child_process";
import { closeSync, createReadStream, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../config/config.ts";
import { homePaths } from "../config/home.ts";
import { isSameProcess, liveHolder, type LockRecord } from "../gateway/upkeep/lock.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { isAlive } from "../process/info.ts";
import { readableLogLine, SPLIT_LOG_ENV } from "../process/log.ts";
import type { Io } from "./io.ts";
import { describeSupervisor, pm2Action, pm2App, recordedSupervisor, supervisorOfDaemon, systemdAction, systemdGaveUp, type Supervisor } from "./supervisor.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The daemon's log files when pm2 runs it or `hearth restart` started it in the background. */
export const logFile = (home: string): string => path.join(home, "logs", "hearth.err.log");
const outLogFile = (home: string): string => path.join(home, "logs", "hearth.out.log");

const say = (io: Io, line: string) => io.stdout.write(`${line}\n`);

/** The running daemon and the supervisor that has Hearth for this home. */
function current(home: string): { holder: LockRecord | null; supervisor: Supervisor } {
  const holder = liveHolder(homePaths(home).lock);
  return { holder, supervisor: holder ? supervisorOfDaemon(holder.pid, home) : recordedSupervisor(home) };
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
  const { holder, supervisor } = current(home);
  if (!holder) {
    say(io, supervisor.kind === "none" ? "Hearth is not running." : `Hearth is not running (it is stopped ${describeSupervisor(supervisor)}).`);
    return 0;
  }
  const problem = stopThrough(supervisor, home, holder);
  if (problem) return failed(io, problem);
  if (!(await waitGone(holder, stopLimitMs(home)))) return failed(io, `pid ${holder.pid} is still stopping; its log says why (\`${hearthCmd("logs")}\`)`);
  say(io, supervisor.kind === "none" ? `Stopped Hearth (pid ${holder.pid}).` : `Stopped Hearth ${describeSupervisor(supervisor)} (it was pid ${holder.pid}).`);
  return 0;
}

/** Asks the supervisor (or, without one, the daemon itself) to stop; a problem's text, or null. */
function stopThrough(s: Supervisor, home: string, holder: LockRecord): string | null {
  switch (s.kind) {
    case "pm2": {
      const r = pm2Action(s, home, ["stop", String(s.id)]);
      return r.ok ? null : `pm2 could not stop Hearth: ${r.stderr || "no reason given"}`;
    }
    case "systemd": {
      const r = systemdAction(s, "stop");
      return r.ok ? null : `systemctl --user stop ${s.unit} failed: ${r.stderr || "no reason given"}`;
    }
    case "none":
      process.kill(holder.pid, "SIGTERM");
      return null;
    default:
      s satisfies never;
      return null;
  }
}

/** `hearth restart`: through the supervisor; without one, stop and start in the background. */
export async function runRestart(home: string, io: Io): Promise<number> {
  const { holder, supervisor } = current(home);
  if (supervisor.kind === "none" && holder) {
    process.kill(holder.pid, "SIGTERM");
    if (!(await waitGone(holder, stopLimitMs(home)))) return failed(io, `pid ${holder.pid} is still stopping; its log says why (\`${hearthCmd("logs")}\`)`);
  }
  return await startThrough(supervisor, home, io, holder);
}

/**
 * `hearth start` in a terminal while a supervisor has Hearth stopped: started through it, so that
 * it restarts Hearth after a crash and does not fail on the lock at its next start. null when
 * no supervisor has Hearth (the terminal runs the daemon itself).
 */
export async function startSupervised(home: string, io: Io): Promise<number | null> {
  const { holder, supervisor } = current(home);
  if (supervisor.kind === "none") return null;
  if (holder) {
    say(io, `Hearth is already running ${describeSupervisor(supervisor)} (pid ${holder.pid}).`);
    return 0;
  }
  return await startThrough(supervisor, home, io, null);
}

async function startThrough(s: Supervisor, home: string, io: Io, was: LockRecord | null): Promise<number> {
  let failedToStart: () => boolean;
  switch (s.kind) {
    case "pm2": {
      // --update-env: a key exported since (the fix a configuration error asked for) reaches it.
      const r = pm2Action(s, home, ["restart", String(s.id), "--update-env"]);
      if (!r.ok) return failed(io, `pm2 could not start Hearth: ${r.stderr || "no reason given"}`);
      failedToStart = () => !["online", "launching"].includes(pm2App(s, home)?.status ?? "");
      break;
    }
    case "systemd": {
      const r = systemdAction(s, was ? "restart" : "start");
      if (!r.ok) return failed(io, `systemctl --user ${was ? "restart" : "start"} ${s.unit} failed: ${r.stderr || "no reason given"}`);
      failedToStart = () => systemdGaveUp(s);
      break;
    }
    case "none": {
      const child = spawnInBackground(home);
      failedToStart = () => !isAlive(child);
      break;
    }
    default:
      s satisfies never;
      return 1;
  }
  const started = await waitStarted(home, was, failedToStart);
  const where = s.kind === "pm2" ? `; pm2 says why: ${hearthCmd("logs")}` : s.kind === "systemd" ? `; see: journalctl --user -u ${s.unit}` : `; see ${logFile(home)} (\`${hearthCmd("logs")}\`)`;
  if (!started) return failed(io, `Hearth did not start ${describeSupervisor(s)}${where}`);
  const log = s.kind === "none" ? `; its log: \`${hearthCmd("logs -f")}\`` : "";
  say(io, `${was ? "Restarted" : "Started"} Hearth ${describeSupervisor(s)} (pid ${started.pid}${was ? `; it was pid ${was.pid}` : ""})${log}.`);
  return 0;
}

function spawnInBackground(home: string): number {
  mkdirSync(path.dirname(logFile(home)), { recursive: true, mode: 0o700 });
  const out = openSync(outLogFile(home), "a", 0o600);
  const err = openSync(logFile(home), "a", 0o600);
  const child = spawn(process.execPath, [...process.execArgv, path.join(root, "bin", "hearth.js"), "start"], {
    cwd: root,
    env: { ...process.env, ...DAEMON_ENV, HEARTH_HOME: home, [SPLIT_LOG_ENV]: "1" },
    detached: true,
    stdio: ["ignore", out, err],
  });
  closeSync(out);
  closeSync(err);
  child.unref();
  return child.pid!;
}

/**
 * The new daemon's lock record once it holds the lock (start-up can take seconds), or null once
 * `failedToStart` says it will not, or after two minutes. `was` is the daemon it replaces.
 */
async function waitStarted(home: string, was: LockRecord | null, failedToStart: () => boolean): Promise<LockRecord | null> {
  const lock = homePaths(home).lock;
  const deadline = Date.now() + 120_000;
  for (let i = 0; Date.now() < deadline; i++) {
    const holder = liveHolder(lock);
    if (holder && holder.pid !== was?.pid) return holder;
    // Asking pm2 or systemctl costs a process: once a second.
    if (i % 10 === 9 && failedToStart()) return null;
    await sleep(100);
  }
  return null;
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

/** `hearth logs`: readable lines as a terminal shows them, or with `json` the files' own JSON lines. */
export async function runLogs(home: string, io: Io, opts: { follow: boolean; lines: number; json: boolean }): Promise<number> {
  const files = logFiles(home);
  const sizes = files.map((f) => sizeOf(f));
  if (sizes.every((s) => s === null)) {
    const { holder, supervisor } = current(home);
    if (supervisor.kind === "systemd") return failed(io, `Hearth runs as the systemd unit ${supervisor.unit}, which logs to the journal: journalctl --user -u ${supervisor.unit} -f`);
    return failed(io, `no log file at ${logFile(home)}: ${holder ? `Hearth (pid ${holder.pid}) logs to the terminal it was started in` : "Hearth has not run with this home yet"}`);
  }
  const show = (line: string) => `${opts.json ? line : readableLogLine(line)}\n`;
  io.stdout.write(mergedLines(files).slice(-opts.lines).map(show).join(""));
  if (!opts.follow) return 0;
  // Follows the files as they grow (from the start when pm2 rotates one) until Ctrl+C; a line
  // is shown once its newline has arrived.
  const partial = files.map(() => "");
  for (;;) {
    await sleep(500);
    for (const [i, file] of files.entries()) {
      const now = sizeOf(file);
      if (now === null) continue;
      let from = sizes[i] ?? 0;
      if (now < from) from = 0;
      if (now > from) {
        let text = partial[i]!;
        for await (const chunk of createReadStream(file, { start: from, end: now - 1, encoding: "utf8" })) text += chunk;
        const lines = text.split("\n");
        partial[i] = lines.pop()!;
        io.stdout.write(lines.filter(Boolean).map(show).join(""));
      }
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
