// Runs the real daemon (`hearth start`) as a child process for e2e tests.
import { daemonNodeArgs } from "../../bench/support/daemon-args.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { hearthBin, isolatedEnv, repoRoot, runHearth, type CliResult } from "./cli-process.ts";
import { e2eLimit } from "./limits.ts";

export interface Daemon {
  home: string;
  env: NodeJS.ProcessEnv;
  proc: ChildProcess;
  /** Everything the daemon wrote to stderr (its log). */
  log(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** Runs `hearth ARGS` against this daemon's home. */
  hearth(args: string[], opts?: { timeoutMs?: number }): Promise<CliResult>;
  /** SIGTERM, then waits for exit (SIGKILL and an error after E2E_WAIT_MS). */
  stop(): Promise<number | string>;
}

/** A new home (mode 700, as mkdtemp makes it) with this config.json, owner-only like every file Hearth writes: `hearth start` refuses one others may read. */
export function makeHome(config?: unknown): string {
  const home = mkdtempSync(join(tmpdir(), "hearth-d-"));
  if (config !== undefined) writeFileSync(join(home, "config.json"), JSON.stringify(config, null, 2), { mode: 0o600 });
  return home;
}

/**
 * Starts `hearth start` on `home` and waits until it is ready (15 s unless `readyTimeoutMs` says
 * otherwise). `opts.cwd`: the folder it is started from (default the project folder, as
 * `npx hearth start` there); `opts.bin`: another launcher; `opts.nodeArgs`: more node arguments.
 */
export async function startDaemon(home: string, extraEnv: Record<string, string>, opts: { cwd?: string; readyTimeoutMs?: number; bin?: string; nodeArgs?: string[] } = {}): Promise<Daemon> {
  const env = isolatedEnv({ HEARTH_HOME: home, HEARTH_LOG: "debug", ...extraEnv });
  const proc = spawn(process.execPath, [...daemonNodeArgs(), ...(opts.nodeArgs ?? []), opts.bin ?? hearthBin, "start"], { env, cwd: opts.cwd ?? repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  proc.stdout!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  let done = false;
  void exited.then(() => (done = true));
  const limit = Math.max(opts.readyTimeoutMs ?? 0, e2eLimit());
  const deadline = Date.now() + limit;
  while (!stderr.includes("gateway.ready")) {
    if (done) throw new Error(`the daemon exited before it was ready:\n${stderr}`);
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`the daemon did not get ready within ${limit / 1000} s:\n${stderr}`);
    }
    await sleep(20);
  }
  return {
    home,
    env,
    proc,
    log: () => stderr,
    exited,
    hearth: (args, opts) => runHearth(args, env, opts),
    stop: async () => {
      if (!done) proc.kill("SIGTERM");
      const limit = e2eLimit();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          proc.kill("SIGKILL");
          reject(new Error(`the daemon did not stop within ${limit / 1000} s of SIGTERM:\n${stderr.slice(-4000)}`));
        }, limit);
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Kills a daemon (if still running) and removes its home. */
export async function cleanupDaemon(d: Daemon | undefined, home?: string): Promise<void> {
  if (d && d.proc.exitCode === null && d.proc.signalCode === null) {
    d.proc.kill("SIGKILL");
    await d.exited;
  }
  const h = home ?? d?.home;
  if (h && existsSync(h)) rmSync(h, { recursive: true, force: true });
}

/** Polls `check` until it returns true, or fails with `what` after `timeoutMs` (at least E2E_WAIT_MS). */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<void> {
  const limit = e2eLimit(timeoutMs);
  const deadline = Date.now() + limit;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${limit / 1000} s)`);
    await sleep(20);
  }
}

/** The ids of the messages the daemon has accepted (on disk in inbox.jsonl) so far. */
export function acceptedIds(home: string): Set<string> {
  const ids = new Set<string>();
  let text = "";
  try {
    text = readFileSync(join(home, "inbox.jsonl"), "utf8");
  } catch {
    return ids;
  }
  for (const line of text.split("\n")) {
    try {
      const r = JSON.parse(line) as { type?: string; entry?: { id?: string } };
      if (r.type === "accepted" && r.entry?.id) ids.add(r.entry.id);
    } catch {
      // blank, or a line still being written
    }
  }
  return ids;
}

/**
 * True once every message the daemon accepted has its outcome recorded in inbox.jsonl (`done`
 * after the final reply was handed over, or `abandoned`): the daemon has nothing more to say
 * about them. What a test checks after this cannot still change, so no fixed wait is needed.
 * A home with no inbox yet is settled.
 */
export function inboxSettled(home: string): boolean {
  let text: string;
  try {
    text = readFileSync(join(home, "inbox.jsonl"), "utf8");
  } catch {
    return true;
  }
  const open = new Set<string>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let r: { type?: string; id?: string; entry?: { id?: string } };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      return false; // a line still being written
    }
    if (r.type === "accepted" && r.entry?.id) open.add(r.entry.id);
    else if ((r.type === "done" || r.type === "abandoned") && r.id) open.delete(r.id);
  }
  return open.size === 0;
}
