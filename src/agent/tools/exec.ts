// The `exec` tool: one bash command in the workspace, in the sandbox when there is one, always in
// its own process group so a timeout or an abort can stop everything it started.
import { spawn, type ChildProcess } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { redact } from "../../process/log.ts";
import { connectionRequester, defineTool, type Tool, type ToolOutput } from "../tool.ts";
import { EXEC_MARKER_VAR, killMarked, newMarker } from "./exec-marker.ts";
import { execRefusal, sandboxedCommand, type ExecSandbox } from "./sandbox.ts";
import type { Egress, ProxySession, Requester } from "../../egress/egress.ts";
import { OutputCapture } from "./output-capture.ts";
import type { ExecHosts } from "./hosts/ssh-hosts.ts";
import { PROVIDER_KEY_ENVS } from "../providers/presets.ts";
import type { FileOrigins } from "./files.ts";

/** What the workspace tools know of where files came from (memory/provenance.ts Provenance). */
export interface WorkspaceOrigins extends FileOrigins {
  /** The first recorded file a command names, as a taint clause; null for none. Must not throw. */
  namedIn(command: string): string | null;
  /** A command starts at `atMs`; kept until `ended`, so a crash leaves what it changed to be recorded. Returns an id. Must not throw. */
  started(atMs: number): number;
  /** Command `id` ended; `why` (its run was tainted): the workspace files it changed are recorded. Must not throw. */
  ended(id: number, why: string | null): void;
}

/** What a file a command of a tainted run changed is recorded as. */
export const CHANGED_TAINTED = "a file a command wrote in a run that had read outside content";

export { OutputCapture };

export const MAX_EXEC_TIMEOUT_MS = 10 * 60_000;
/** How long a killed group gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 1_000;
/** How long to wait for buffered output after bash exits; a background child may hold the pipes. */
const DRAIN_MS = 200;
/** Hearth's own credentials: a command (or whoever wrote it into a web page) never sees them. */
export const SECRET_ENV_VARS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", ...PROVIDER_KEY_ENVS.filter((v) => v !== "ANTHROPIC_API_KEY"), "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "EMAIL_PASSWORD", "HEARTH_TRANSCRIPTION_API_KEY"];

/** Commands run without a sandbox: the default for tests; the daemon always passes its decision. */
export const UNSANDBOXED: ExecSandbox = { kind: "none", mode: "off", why: "off", detail: "no sandbox" };

/** `markerPrefix`: from `markerPrefixFor(home)`, so a restarted daemon finds what a crash left. */
/**
 * `hosts`: the owner's other machines (`tools.exec.hosts`); with at least one, the input gains an
 * optional `host`, the name an approval check reads off the request. Without, the schema is the
 * same as ever. `egress`: the daemon's egress policy; a sandboxed command with the network on reaches out only
 * through a proxy opened from it for that command. Absent (tests of the tool alone): no network.
 */
export function createExecTool(opts: { defaultTimeoutMs: number; sandbox?: ExecSandbox; markerPrefix?: string; hosts?: ExecHosts; egress?: Egress; origins?: WorkspaceOrigins }): Tool {
  const defaultSeconds = formatSeconds(opts.defaultTimeoutMs);
  const hosts = opts.hosts && opts.hosts.names().length > 0 ? opts.hosts : undefined;
  const base = {
    command: z.string().describe("Bash command"),
    // A plain number: .int() would add a 2^53 maximum to the schema sent with every request.
    timeoutMs: z.number().positive().optional().describe(`Timeout in ms (max ${MAX_EXEC_TIMEOUT_MS})`),
  };
  const hostNote = hosts ? ` With host, runs on that machine over SSH instead (hosts: ${hosts.names().join(", ")}).` : "";
  return defineTool({
    name: "exec",
    description: `Run a bash command in the workspace folder; returns stdout and stderr interleaved, then the exit code. Killed after ${defaultSeconds} unless timeoutMs is given. Background processes end with the command.${sandboxNote(opts.sandbox ?? UNSANDBOXED)}${hostNote}`,
    input: hosts
      ? z.object({ ...base, host: z.string().optional().describe("A configured host to run on; absent: this machine") })
      : z.object(base),
    readOnly: false,
    execute: async (input: ExecRequest, ctx) => {
      const timeoutMs = effectiveTimeoutMs(input.timeoutMs, opts.defaultTimeoutMs);
      if (input.host !== undefined) {
        if (!hosts) return Promise.resolve({ content: "No hosts are configured (tools.exec.hosts): commands run on this machine only.", isError: true });
        // Other machines are the owner's alone, whatever tools.shared.allow says about exec.
        if (ctx.scope !== "main") return Promise.resolve({ content: "Commands on other hosts are available to the owner only.", isError: true });
        return hosts.run(input.host, { command: input.command, timeoutMs, signal: ctx.signal });
      }
      const sandbox = opts.sandbox ?? UNSANDBOXED;
      const refusal = execRefusal(sandbox);
      if (refusal) return Promise.resolve({ content: refusal, isError: true });
      const what = `exec: ${shorten(input.command.trim(), 300)}`;
      // A command that names a file from outside reads it (as far as Hearth can tell): the run is
      // tainted before it starts. What a tainted run's command changed carries its taint on.
      const named = opts.origins?.namedIn(input.command);
      if (named) ctx.tookIn?.(named);
      const running = opts.origins?.started(Date.now());
      const output = await runCommand({
        command: input.command,
        cwd: ctx.workspace,
        timeoutMs,
        signal: ctx.signal,
        sandbox,
        ...(opts.markerPrefix ? { markerPrefix: opts.markerPrefix } : {}),
        ...(opts.egress && sandbox.kind === "bwrap" && sandbox.network ? { egress: { egress: opts.egress, requester: connectionRequester(ctx, { what, tool: "exec", command: input.command, folder: ctx.workspace }) } } : {}),
      });
      if (running !== undefined) opts.origins!.ended(running, ctx.taintedBy?.() ? CHANGED_TAINTED : null);
      return output;
    },
    summarize: (input: ExecRequest) => `${input.host ? `${input.host}: ` : ""}${shorten(input.command.trimStart().split("\n", 1)[0] ?? "", 80)}`,
  });
}

/** One `exec` call as the model made it; `host` absent means this machine. */
export interface ExecRequest {
  command: string;
  timeoutMs?: number | undefined;
  host?: string | undefined;
}

/** What the model must know to not waste calls: where it may write, whether there is a network. */
function sandboxNote(sb: ExecSandbox): string {
  if (sb.kind === "none") return "";
  return ` Sandboxed: only the workspace is writable, except its notes (SOUL.md, IDENTITY.md, AGENTS.md, USER.md, MEMORY.md, HEARTBEAT.md, memory/, skills/), which are read-only (change them with the file tools); a private /tmp is emptied afterwards; Hearth's own files are not visible${sb.network ? "; the network only through Hearth's proxy (HTTP_PROXY, ALL_PROXY are set; tools that ignore them cannot connect), which may ask the owner" : "; no network"}.`;
}

/** The model's override if given, else the configured default; never above 10 minutes. */
export const effectiveTimeoutMs = (requested: number | undefined, defaultMs: number): number =>
  Math.min(requested ?? defaultMs, MAX_EXEC_TIMEOUT_MS);

type KillReason = "timeout" | "aborted";

/** `env` without Hearth's credentials: the named variables, and any whose value holds a registered secret. */
export function commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of SECRET_ENV_VARS) delete out[name];
  for (const [name, value] of Object.entries(out)) if (value !== undefined && redact(value) !== value) delete out[name];
  return out;
}

/**
 * Runs `bash -c command` (in the sandbox if there is one) and resolves once bash has exited and
 * no process it started is left: in bwrap the PID namespace ends with bash; without it, its
 * process group and every process carrying its marker are killed. Never rejects: spawn failures
 * come back as `isError` results.
 */
export async function runCommand(opts: {
  command: string;
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  sandbox: ExecSandbox;
  markerPrefix?: string;
  /** The proxy to open for this command (a sandbox with the network on); closed when it ends. */
  egress?: { egress: Egress; requester: Requester & { session: string } };
}): Promise<ToolOutput> {
  if (opts.signal.aborted) return { content: "Command not run: the run was aborted.", isError: true };
  let proxy: ProxySession | undefined;
  try {
    proxy = opts.egress ? await opts.egress.egress.open(opts.egress.requester) : undefined;
  } catch (err) {
    return { content: `Command not run: its network proxy could not start (${messageOf(err)}).`, isError: true };
  }
  try {
    return await runSpawned(opts, proxy);
  } finally {
    await proxy?.close();
  }
}

async function runSpawned(opts: { command: string; cwd: string; timeoutMs: number; signal: AbortSignal; sandbox: ExecSandbox; markerPrefix?: string }, proxy: ProxySession | undefined): Promise<ToolOutput> {
  const marker = newMarker(opts.markerPrefix ?? "anon");
  const { file, args, env } = sandboxedCommand(opts.sandbox, opts.command, opts.cwd, proxy);
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      cwd: opts.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...commandEnv(process.env), ...env, [EXEC_MARKER_VAR]: marker },
    });
  } catch (err) {
    return { content: `Could not start bash: ${messageOf(err)}`, isError: true };
  }

  const output = new OutputCapture();
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk));
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>((resolve) => {
    child.once("error", (error) => resolve({ error }));
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });

  const pgid = child.pid;
  let killedBy: KillReason | undefined;
  let escalation: NodeJS.Timeout | undefined;
  const stop = (reason: KillReason) => {
    if (killedBy || pgid === undefined) return;
    killedBy = reason;
    signalGroup(pgid, "SIGTERM");
    escalation = setTimeout(() => signalGroup(pgid, "SIGKILL"), KILL_GRACE_MS);
  };
  const timer = setTimeout(() => stop("timeout"), opts.timeoutMs);
  const onAbort = () => stop("aborted");
  opts.signal.addEventListener("abort", onAbort, { once: true });

  const result = await exited;
  clearTimeout(timer);
  opts.signal.removeEventListener("abort", onAbort);
  if (killedBy && pgid !== undefined) {
    // bash can die on SIGTERM while a child that ignores it lives on; wait for the SIGKILL.
    await waitForGroupExit(pgid, KILL_GRACE_MS + 500);
  }
  clearTimeout(escalation);
  // Whatever left the group (setsid, double fork) but still carries the marker goes now too.
  if (opts.sandbox.kind === "none") await killMarked(marker);
  await Promise.race([closed, sleep(DRAIN_MS)]);
  child.stdout?.destroy();
  child.stderr?.destroy();

  if ("error" in result) {
    const hint = (result.error as NodeJS.ErrnoException).code === "ENOENT" ? " (is bash installed, and does the workspace folder exist?)" : "";
    return { content: `Could not run the command: ${result.error.message}${hint}`, isError: true };
  }
  const text = output.text();
  const body = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  if (killedBy === "timeout") {
    return { content: `${body}[killed: timed out after ${formatSeconds(opts.timeoutMs)}]`, isError: true };
  }
  if (killedBy === "aborted") return { content: `${body}[killed: aborted]`, isError: true };
  if (result.code === null) return { content: `${body}[killed by signal ${result.signal ?? "unknown"}]`, isError: true };
  return { content: `${body}[exit code ${result.code}]`, isError: result.code !== 0 };
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

async function waitForGroupExit(pgid: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline && (await groupHasLiveProcess(pgid))) await sleep(25);
}

/**
 * Whether any process of the group still runs. Zombies do not count: where PID 1 does not reap
 * orphans promptly (containers), they linger in the group long after they died.
 */
async function groupHasLiveProcess(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== "linux") return true;
  let pids: string[];
  try {
    pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[2] === String(pgid) && fields[0] !== "Z") return true;
  }
  return false;
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
