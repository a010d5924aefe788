// Runs the real `hearth` command as a child process, with an isolated home and environment.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { E2E_WAIT_MS } from "./limits.ts";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const hearthBin = fileURLToPath(new URL("../../bin/hearth.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a test process gets: no credentials or settings leak in from the developer's shell. */
export function isolatedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(ANTHROPIC_|OPENAI_|OPENROUTER_|GROQ_|TELEGRAM_|DISCORD_|SLACK_|MATRIX_|SIGNAL_|WHATSAPP_|EMAIL_|HEARTH_)/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

export interface RunOptions {
  timeoutMs?: number;
  /** Called once the process is spawned (to signal or kill it mid-run). */
  onSpawn?: (child: ChildProcess) => void;
  /** Written to its stdin, which is then closed (default: no stdin at all). */
  input?: string;
  /** The launcher to run (default this checkout's bin/hearth.js). */
  bin?: string;
  /** The folder it runs in (default this checkout, as `npx hearth` from it). */
  cwd?: string;
}

export function runHearth(args: string[], env: NodeJS.ProcessEnv, opts: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.bin ?? hearthBin, ...args], { env, cwd: opts.cwd ?? repoRoot, stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    opts.onSpawn?.(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`hearth ${args.join(" ")} did not exit within ${opts.timeoutMs ?? E2E_WAIT_MS} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? E2E_WAIT_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
