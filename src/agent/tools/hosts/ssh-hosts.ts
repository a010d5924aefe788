// The owner's other machines as `exec` targets: one reused SSH connection per host, commands run
// under `setsid` so a timeout or `/stop` kills the remote command's whole process group.
import type { Client, ClientChannel } from "ssh2";
import type { ToolOutput } from "../../tool.ts";
import { OutputCapture } from "../output-capture.ts";
import type { ExecHostsConfig, SshHostConfig } from "./config.ts";
import { connectHost, type ConnectOptions } from "./connect.ts";

/** How long the remote group gets between SIGTERM and SIGKILL (the kill script's own wait). */
const KILL_GRACE_S = 1;
/** After a kill, how long to wait for the command's channel to close before giving up on it. */
const CLOSE_WAIT_MS = 5_000;

export interface RemoteRun {
  command: string;
  timeoutMs: number;
  signal: AbortSignal;
}

/** The hosts `exec` may run on; the tool sees only this. */
export interface ExecHosts {
  names(): string[];
  /** Never rejects: connection and host-key failures come back as `isError` results. */
  run(name: string, run: RemoteRun): Promise<ToolOutput>;
}

export class SshHosts implements ExecHosts {
  readonly #hosts: ExecHostsConfig;
  readonly #opts: ConnectOptions;
  readonly #clients = new Map<string, Promise<Client>>();
  #closed = false;

  constructor(hosts: ExecHostsConfig, opts: ConnectOptions) {
    this.#hosts = hosts;
    this.#opts = opts;
  }

  names(): string[] {
    return Object.keys(this.#hosts);
  }

  async run(name: string, run: RemoteRun): Promise<ToolOutput> {
    const cfg = this.#hosts[name];
    if (!cfg) {
      const names = this.names();
      return { content: `Unknown host "${name}". ${names.length > 0 ? `Configured hosts: ${names.join(", ")}.` : "No hosts are configured (tools.exec.hosts)."}`, isError: true };
    }
    if (run.signal.aborted) return { content: "Command not run: the run was aborted.", isError: true };
    let client: Client;
    try {
      client = await this.#client(name, cfg);
    } catch (err) {
      return { content: (err as Error).message, isError: true };
    }
    return await runOn(client, name, cfg, run);
  }

  /** Ends every connection; later runs are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(clients.map((p) => p.then((c) => c.end(), () => undefined)));
  }

  #client(name: string, cfg: SshHostConfig): Promise<Client> {
    if (this.#closed) return Promise.reject(new Error("Hearth is shutting down."));
    const existing = this.#clients.get(name);
    if (existing) return existing;
    const connecting = connectHost(name, cfg, this.#opts).then(({ client }) => {
      // A connection that ends (server gone, keep-alives unanswered) is forgotten: the next command reconnects.
      client.once("close", () => {
        if (this.#clients.get(name) === connecting) this.#clients.delete(name);
      });
      return client;
    });
    this.#clients.set(name, connecting);
    connecting.catch(() => {
      if (this.#clients.get(name) === connecting) this.#clients.delete(name);
    });
    return connecting;
  }
}

/** POSIX shell quoting: one argument, whatever it holds. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * The line the server's login shell runs: a new session (its pid is the process group the kill
 * targets, printed first on stderr), the host's variables and folder, then the command in bash.
 */
export function remoteCommandLine(command: string, cfg: Pick<SshHostConfig, "cwd" | "env">): string {
  const exports = Object.entries(cfg.env).map(([k, v]) => `export ${k}=${shellQuote(v)}; `).join("");
  const cd = cfg.cwd ? `cd -- ${shellQuote(cfg.cwd)} && ` : "";
  const inner = `printf '%s\\n' "$$" >&2; ${exports}${cd}exec bash -c "$1"`;
  // Not `exec setsid`: the login shell leads its own group, so setsid would fork and the pid
  // printed would not be the group's. A forked child is no group leader; `; exit` keeps it forked.
  // The login shell's own stderr goes to /dev/null (it would report "Terminated" after a kill);
  // the command keeps the real one as fd 2.
  return `exec 3>&2 2>/dev/null; setsid bash -c ${shellQuote(inner)} hearth-exec ${shellQuote(command)} 2>&3 3>&-; exit $?`;
}

type Ending =
  | { type: "exit"; code: number | null; signal: string | null }
  | { type: "lost"; reason: string }
  | { type: "failed"; reason: string };

async function runOn(client: Client, name: string, cfg: SshHostConfig, run: RemoteRun): Promise<ToolOutput> {
  const output = new OutputCapture();
  let pgid: number | undefined;
  let killedBy: "timeout" | "aborted" | undefined;
  let exitInfo: { code: number | null; signal: string | null } | undefined;
  let resolveEnding = (_end: Ending) => {};
  const ending = new Promise<Ending>((resolve) => (resolveEnding = resolve));

  // Everything the channel reports is watched from inside ssh2's callback, in the same tick: a
  // fast command's exec reply, output, exit status and close can arrive in one read, and ssh2
  // emits "exit" at once, to whoever listens then (only data and the close wait for a reader).
  const watch = (channel: ClientChannel) => {
    channel.on("data", (chunk: Buffer) => output.push(chunk));
    let header = "";
    channel.stderr.on("data", (chunk: Buffer) => {
      if (pgid !== undefined) return output.push(chunk);
      header += chunk.toString("latin1");
      const nl = header.indexOf("\n");
      if (nl < 0 && header.length < 32) return;
      const first = nl < 0 ? header : header.slice(0, nl);
      if (/^\d+$/.test(first)) {
        pgid = Number(first);
        if (killedBy) void killGroup(client, pgid);
        const rest = Buffer.from(header.slice(nl + 1), "latin1");
        if (rest.length > 0) output.push(rest);
      } else {
        pgid = -1;
        output.push(Buffer.from(header, "latin1"));
      }
    });
    channel.once("exit", (code: number | null, signal?: string) => {
      exitInfo = { code: code ?? null, signal: signal ?? null };
    });
    // Also when the connection drops: ssh2 closes every open channel then, after their output.
    channel.once("close", () => resolveEnding(exitInfo ? { type: "exit", ...exitInfo } : { type: "lost", reason: "the connection closed" }));
    channel.stdin.end();
  };

  let channel: ClientChannel;
  try {
    channel = await new Promise<ClientChannel>((resolve, reject) => {
      client.exec(remoteCommandLine(run.command, cfg), (err, ch) => {
        if (err) return reject(err);
        watch(ch);
        resolve(ch);
      });
    });
  } catch (err) {
    return { content: `Could not start the command on ${name}: ${(err as Error).message}`, isError: true };
  }

  // The connection is shared by every command on the host: these listeners go with the command.
  // Once the exit status is in, the command finished: the channel's close (which follows the
  // connection's) reports it with all its output, whatever happens to the connection meanwhile.
  const onClientClose = () => {
    if (!exitInfo) resolveEnding({ type: "lost", reason: "the connection closed" });
  };
  const onClientError = (err: Error) => {
    if (!exitInfo) resolveEnding({ type: "lost", reason: err.message });
  };
  client.on("close", onClientClose);
  client.on("error", onClientError);

  let onKilled = () => {};
  const killed = new Promise<void>((resolve) => (onKilled = resolve));
  const stop = (reason: "timeout" | "aborted") => {
    if (killedBy) return;
    killedBy = reason;
    onKilled();
    if (pgid !== undefined && pgid > 0) void killGroup(client, pgid);
  };
  const timer = setTimeout(() => stop("timeout"), run.timeoutMs);
  const onAbort = () => stop("aborted");
  run.signal.addEventListener("abort", onAbort, { once: true });
  // Aborted while the channel opened: the command may already run there.
  if (run.signal.aborted) stop("aborted");

  const end = await Promise.race([ending, killed.then(() => withDeadline(ending))]);
  clearTimeout(timer);
  run.signal.removeEventListener("abort", onAbort);
  client.off("close", onClientClose);
  client.off("error", onClientError);
  if (end.type === "failed") channel.close();

  const text = output.text();
  const body = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  if (killedBy === "timeout") return { content: `${body}[killed on ${name}: timed out after ${Number((run.timeoutMs / 1000).toFixed(1))} s]`, isError: true };
  if (killedBy === "aborted") return { content: `${body}[killed on ${name}: aborted]`, isError: true };
  if (end.type !== "exit") {
    return { content: `${body}[connection to ${name} lost while the command ran; it may or may not have finished there. The next command reconnects.]`, isError: true };
  }
  if (end.code === null) return { content: `${body}[killed on ${name} by signal ${end.signal ?? "unknown"}]`, isError: true };
  return { content: `${body}[exit code ${end.code}]`, isError: end.code !== 0 };
}

async function withDeadline(ending: Promise<Ending>): Promise<Ending> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Ending>((resolve) => {
    timer = setTimeout(() => resolve({ type: "failed", reason: "the remote command did not end after the kill" }), CLOSE_WAIT_MS + KILL_GRACE_S * 1000);
  });
  try {
    return await Promise.race([ending, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM to the remote group, SIGKILL after the grace if anything is left; over a second channel. */
function killGroup(client: Client, pgid: number): Promise<void> {
  const script = `kill -TERM -- -${pgid} 2>/dev/null; i=0; while kill -0 -- -${pgid} 2>/dev/null && [ $i -lt ${KILL_GRACE_S * 10} ]; do sleep 0.1; i=$((i+1)); done; kill -KILL -- -${pgid} 2>/dev/null; true`;
  return new Promise((resolve) => {
    try {
      client.exec(script, (err, ch) => {
        if (err) return resolve();
        ch.stdin.end();
        ch.resume();
        ch.stderr.resume();
        ch.once("close", () => resolve());
      });
    } catch {
      resolve();
    }
  });
}
