// A real OpenSSH server for tests: its own host key, authorized_keys and log in a temp folder,
// listening on a free loopback port. `sshdMissing()` says why tests must skip where there is none.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import os from "node:os";
import path from "node:path";

export const SSHD = "/usr/sbin/sshd";

/** Why an sshd cannot run here, or null when it can. */
export function sshdMissing(): string | null {
  if (!existsSync(SSHD)) return `${SSHD} is not installed (apt-get install openssh-server)`;
  for (const tool of ["ssh-keygen", "setsid", "pgrep"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return null;
}

export interface Sshd {
  dir: string;
  port: number;
  user: string;
  /** The client's private key, authorised on the server. */
  identityFile: string;
  /** `[127.0.0.1]:PORT ssh-ed25519 …`, the line a known_hosts file needs. */
  knownHostsLine: string;
  /** `SHA256:…` of the host key, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** How many logins the server has accepted since it was first started. */
  logins(): number;
  /**
   * Whether every process of the server (listener, connections, their shells and commands) is
   * asleep. Once a command's output was written, an asleep connection process has sent it: sshd
   * only sleeps in its poll with nothing left to read from the command or to write to the client.
   */
  quiet(): boolean;
  /** Kills the server and every connection's sshd process at once (the machine "goes away"). */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same keys. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startSshd(): Promise<Sshd> {
  // As root, sshd insists on its privilege-separation folder.
  if (process.getuid?.() === 0 && !existsSync("/run/sshd")) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = mkdtempSync(path.join(os.tmpdir(), "hearth-sshd-"));
  const hostKey = path.join(dir, "host_ed25519");
  const identityFile = path.join(dir, "client_ed25519");
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "test-host", "-f", hostKey]);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "test-client", "-f", identityFile]);
  writeFileSync(path.join(dir, "authorized_keys"), readFileSync(`${identityFile}.pub`), { mode: 0o600 });
  let log = "";
  const config = path.join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
      `PidFile ${path.join(dir, "sshd.pid")}`,
      "UsePAM no",
      "StrictModes no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "LogLevel VERBOSE",
      // The login shell reads ~/.bashrc over SSH; this machine's may be slow (pyenv): use an empty home.
      `SetEnv HOME=${dir}`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const [type, blob] = readFileSync(`${hostKey}.pub`, "utf8").trim().split(/\s+/) as [string, string];
  const fingerprint = execFileSync("ssh-keygen", ["-l", "-f", `${hostKey}.pub`], { encoding: "utf8" }).split(/\s+/)[1] as string;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(SSHD, ["-D", "-e", "-f", config, "-p", String(port), "-h", hostKey], { detached: true, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
    await waitForPort(port, child);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((resolve) => c.once("exit", resolve));
    // Each connection's sshd runs in a session of its own: kill the listener's whole tree.
    for (const pid of [c.pid as number, ...descendants(c.pid as number)]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await gone;
  };
  await start();
  return {
    dir,
    port,
    user: os.userInfo().username,
    identityFile,
    knownHostsLine: `[127.0.0.1]:${port} ${type} ${blob}`,
    fingerprint,
    logins: () => log.split("\n").filter((l) => l.includes("Accepted publickey")).length,
    quiet: () => {
      const pid = child?.pid;
      return pid !== undefined && [pid, ...descendants(pid)].every((p) => stateOf(p) !== "R");
    },
    kill,
    restart: start,
    close: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the port accepts a connection; rejects if sshd exits first. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sshd exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sshd did not listen on ${port}`);
}

/** A process's state letter (R running or runnable, S asleep, …); null once it is gone. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] as string;
  } catch {
    return null;
  }
}

/** Every process below `root`, from /proc's parent pids. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const [pid, ppid] of parentOf) if (ppid === parent) {
      out.push(pid);
      frontier.push(pid);
    }
  }
  return out;
}
