// Runs the real daemon (`hearth start`) as a child process for e2e tests.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { hearthBin, isolatedEnv, repoRoot, runHearth, type CliResult } from "./cli-process.ts";

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
  /** SIGTERM, then waits for exit. */
  stop(): Promise<number | string>;
}

export function makeHome(config?: unknown): string {
  const home = mkdtempSync(join(tmpdir(), "hearth-d-"));
  if (config !== undefined) writeFileSync(join(home, "config.json"), JSON.stringify(config, null, 2));
  return home;
}

/**
 * Starts `hearth start` on `home` and waits until it is ready (15 s unless `readyTimeoutMs` says
 * otherwise). `opts.cwd`: the folder it is started from (default the project folder, as
 * `npx hearth start` there).
 */
export async function startDaemon(home: string, extraEnv: Record<string, string>, opts: { cwd?: string; readyTimeoutMs?: number } = {}): Promise<Daemon> {
  const env = isolatedEnv({ HEARTH_HOME: home, HEARTH_LOG: "debug", ...extraEnv });
  const proc = spawn(process.execPath, [hearthBin, "start"], { env, cwd: opts.cwd ?? repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  proc.stdout!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  let done = false;
  void exited.then(() => (done = true));
  const readyTimeoutMs = opts.readyTimeoutMs ?? 15_000;
  const deadline = Date.now() + readyTimeoutMs;
  while (!stderr.includes("gateway.ready")) {
    if (done) throw new Error(`the daemon exited before it was ready:\n${stderr}`);
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`the daemon did not get ready within ${readyTimeoutMs / 1000} s:\n${stderr}`);
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
      return exited;
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

/** Polls `check` until it returns true, or fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
