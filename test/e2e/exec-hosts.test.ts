// `exec` on another host, against a real OpenSSH server on a loopback port (skipped, saying why,
// where openssh-server is not installed). One sshd for the whole file.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecTool } from "../../src/agent/tools/exec.ts";
import { SshHosts } from "../../src/agent/tools/hosts/ssh-hosts.ts";
import type { ExecHostsConfig } from "../../src/agent/tools/hosts/config.ts";
import type { ToolContext, ToolOutput } from "../../src/agent/tool.ts";
import { silentLogger } from "../../src/process/log.ts";
import { runHosts } from "../../src/cli/hosts.ts";
import { doctor } from "../../src/cli/doctor.ts";
import { hearthCommand } from "../../src/process/hearth-command.ts";
import { E2E_WAIT_MS } from "../support/limits.ts";
import { cleanupDaemon, makeHome, startDaemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text } from "../support/fake-model.ts";
import { sshdMissing, startSshd, type Sshd } from "../support/sshd.ts";

const missing = sshdMissing();
if (missing) console.warn(`SSH exec host tests skipped: ${missing}`);

let sshd: Sshd;
let knownHosts: string;
const pools: SshHosts[] = [];
const sleepers: string[] = [];

beforeAll(async () => {
  if (missing) return;
  sshd = await startSshd();
  knownHosts = path.join(sshd.dir, "known_hosts");
  writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
}, E2E_WAIT_MS);

afterAll(async () => {
  for (const pool of pools) await pool.close();
  for (const s of sleepers) for (const pid of pgrep(s)) process.kill(pid, "SIGKILL");
  await sshd?.close();
});

const hostsFor = (extra: Partial<ExecHostsConfig[string]> = {}): ExecHostsConfig => ({
  nas: { type: "ssh", host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile: sshd.identityFile, knownHostsFile: knownHosts, env: {}, ...extra },
});

function pool(hosts: ExecHostsConfig = hostsFor()): SshHosts {
  const p = new SshHosts(hosts, { defaultKnownHostsFile: path.join(sshd.dir, "default_known_hosts") });
  pools.push(p);
  return p;
}

const ctx = (signal = new AbortController().signal, scope: "main" | "shared" = "main"): ToolContext => ({ signal, workspace: sshd.dir, scope, sessionKey: "main", log: silentLogger });

const exec = (hosts: SshHosts, input: Record<string, unknown>, c = ctx()): Promise<ToolOutput> =>
  createExecTool({ defaultTimeoutMs: 60_000, hosts }).execute({ ...input } as never, c);

/**
 * Pids of the processes whose whole command line is `command` (the server is this machine). Not a
 * substring: the shells sshd starts carry the command in theirs before any of it has run.
 */
function pgrep(command: string): number[] {
  try {
    return execFileSync("pgrep", ["-fx", command], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A `sleep` only this test runs: fractional seconds make its command line unique. */
function sleeper(): string {
  const s = `sleep 3000.${Math.floor(Math.random() * 1e9)}`;
  sleepers.push(s);
  return s;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + E2E_WAIT_MS;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(missing !== null)("exec on an SSH host", () => {
  it("returns the remote command's output, exit code, folder and variables", async () => {
    const hosts = pool(hostsFor({ cwd: "/tmp", env: { GREETING: "it's here" } }));
    const out = await exec(hosts, { command: 'pwd; echo "$GREETING"; echo oops >&2; exit 3', host: "nas" });
    expect(out).toEqual({ content: "/tmp\nit's here\noops\n[exit code 3]", isError: true });
  });

  it("20 commands in a row use one connection", async () => {
    const hosts = pool();
    const before = sshd.logins();
    for (let i = 0; i < 20; i++) expect(await exec(hosts, { command: `echo ${i}`, host: "nas" })).toEqual({ content: `${i}\n[exit code 0]`, isError: false });
    expect(sshd.logins() - before).toBe(1);
  });

  it("refuses a server whose key is unknown, showing its fingerprint and how to trust it", async () => {
    const hosts = pool(hostsFor({ knownHostsFile: path.join(sshd.dir, "empty_known_hosts") }));
    const before = sshd.logins();
    const out = await exec(hosts, { command: "echo should-not-run", host: "nas" });
    expect(out).toEqual({
      content: `The host key of nas is not known, so the connection was refused. The server offered the ssh-ed25519 key ${sshd.fingerprint}. If that is its key (compare with \`ssh-keygen -lf\` on the server), trust it with: hearth hosts trust nas`,
      isError: true,
    });
    expect(sshd.logins()).toBe(before);
  });

  it("refuses an identityFile others may read, with OpenSSH's reason, before connecting", async () => {
    const loose = path.join(sshd.dir, "client_ed25519_loose");
    writeFileSync(loose, readFileSync(sshd.identityFile), { mode: 0o644 });
    chmodSync(loose, 0o644);
    const hosts = pool(hostsFor({ identityFile: loose }));
    const before = sshd.logins();
    const out = await exec(hosts, { command: "echo should-not-run", host: "nas" });
    expect(out).toEqual({
      content: `Could not use the identityFile of nas: UNPROTECTED PRIVATE KEY FILE! Permissions 0644 for '${loose}' are too open. It is required that your private key files are NOT accessible by others; run chmod 600 '${loose}'.`,
      isError: true,
    });
    expect(sshd.logins()).toBe(before);
  });

  it("refuses a server whose key changed", async () => {
    const other = path.join(sshd.dir, "other_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
    const otherFp = execFileSync("ssh-keygen", ["-l", "-f", `${other}.pub`], { encoding: "utf8" }).split(/\s+/)[1];
    const [type, blob] = execFileSync("cat", [`${other}.pub`], { encoding: "utf8" }).split(/\s+/);
    const changed = path.join(sshd.dir, "changed_known_hosts");
    writeFileSync(changed, `[127.0.0.1]:${sshd.port} ${type} ${blob}\n`);
    const out = await exec(pool(hostsFor({ knownHostsFile: changed })), { command: "echo should-not-run", host: "nas" });
    expect(out).toEqual({
      content: `The host key of nas has CHANGED, so the connection was refused: the server offered the ssh-ed25519 key ${sshd.fingerprint}, but ${changed} records ${otherFp}. Someone may be intercepting the connection. If the server's key really changed, remove its line from ${changed} and run: hearth hosts trust nas`,
      isError: true,
    });
  });

  it("/stop kills the remote command's whole process group, background children included", async () => {
    const hosts = pool();
    const [bg, fg] = [sleeper(), sleeper()];
    const stop = new AbortController();
    const running = exec(hosts, { command: `nohup ${bg} >/dev/null 2>&1 & echo started; ${fg}`, host: "nas" }, ctx(stop.signal));
    await until(() => pgrep(bg).length > 0 && pgrep(fg).length > 0, "the remote sleepers");
    stop.abort();
    expect(await running).toEqual({ content: "started\n[killed on nas: aborted]", isError: true });
    await until(() => pgrep(bg).length === 0 && pgrep(fg).length === 0, "the remote sleepers to be gone");
  });

  it("a timeout kills the remote command too", async () => {
    const s = sleeper();
    const out = await exec(pool(), { command: s, host: "nas", timeoutMs: 1500 });
    expect(out).toEqual({ content: "[killed on nas: timed out after 1.5 s]", isError: true });
    await until(() => pgrep(s).length === 0, "the remote sleeper to be gone");
  });

  it("is the owner's only: a shared scope is refused before connecting", async () => {
    const before = sshd.logins();
    const out = await exec(pool(), { command: "echo hi", host: "nas" }, ctx(undefined, "shared"));
    expect(out).toEqual({ content: "Commands on other hosts are available to the owner only.", isError: true });
    expect(await exec(pool(), { command: "echo hi", host: "home" })).toEqual({ content: 'Unknown host "home". Configured hosts: nas.', isError: true });
    expect(sshd.logins()).toBe(before);
  });

  it("the server going away mid-command is a clear result, and the next command reconnects", async () => {
    const hosts = pool();
    expect(await exec(hosts, { command: "echo up", host: "nas" })).toEqual({ content: "up\n[exit code 0]", isError: false });
    const s = sleeper();
    const running = exec(hosts, { command: `echo working; ${s}`, host: "nas" });
    // "working" was printed before the sleeper started; once sshd is idle it has been sent.
    await until(() => pgrep(s).length > 0 && sshd.quiet(), "the remote sleeper, with the output before it sent");
    await sshd.kill();
    expect(await running).toEqual({
      content: "working\n[connection to nas lost while the command ran; it may or may not have finished there. The next command reconnects.]",
      isError: true,
    });
    await sshd.restart();
    const before = sshd.logins();
    expect(await exec(hosts, { command: "echo back", host: "nas" })).toEqual({ content: "back\n[exit code 0]", isError: false });
    expect(sshd.logins() - before).toBe(1);
  });
});

describe.skipIf(missing !== null)("hearth hosts", () => {
  function cli(home: string, args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdin: process.stdin, stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } } as never;
    return runHosts(home, args, io).then((code) => ({ code, out: out.join(""), err: err.join("") }));
  }

  it("shows an untrusted host with its key, trusts it on request, then lists it reachable", async () => {
    const home = path.join(sshd.dir, "home");
    mkdirSync(home, { recursive: true });
    const cfg = { type: "ssh", host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile: sshd.identityFile };
    writeFileSync(path.join(home, "config.json"), JSON.stringify({ tools: { exec: { hosts: { nas: cfg } } } }));
    const where = `${sshd.user}@127.0.0.1:${sshd.port}`;

    const doctorBefore = await doctor(home, {});
    expect(doctorBefore.filter((c) => c.name === "host nas")).toEqual([
      { name: "host nas", ok: false, detail: `host key not trusted yet: ssh-ed25519 ${sshd.fingerprint}`, fix: `check the key on the server, then: ${hearthCommand()} hosts trust nas` },
    ]);
    const before = await cli(home, []);
    expect(before).toEqual({ code: 1, out: `nas  ${where}  refused: host key not trusted yet  ssh-ed25519 ${sshd.fingerprint}  (check it, then: ${hearthCommand()} hosts trust nas)\n`, err: "" });

    const trusted = await cli(home, ["trust", "nas", "--yes"]);
    expect(trusted).toEqual({
      code: 0,
      out: `nas ([127.0.0.1]:${sshd.port}) offers the ssh-ed25519 key ${sshd.fingerprint}.\nCompare it with the server's own: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub\nRecorded in ${home}/known_hosts.\n`,
      err: "",
    });
    expect(readFileSync(path.join(home, "known_hosts"), "utf8")).toBe(`${sshd.knownHostsLine}\n`);

    const after = await cli(home, []);
    expect(after.code).toBe(0);
    expect(after.out).toMatch(new RegExp(`^nas  ${where}  reachable  \\d+ ms  ssh-ed25519 ${sshd.fingerprint.replace(/[+/]/g, "\\$&")}\n$`));
    const checks = await doctor(home, {});
    expect(checks.filter((c) => c.name === "host nas")).toEqual([{ name: "host nas", ok: true, detail: expect.stringMatching(new RegExp(`^reachable, \\d+ ms, ssh-ed25519 ${sshd.fingerprint.replace(/[+/]/g, "\\$&")}$`)) }]);
    expect(await cli(home, ["trust", "nas"])).toEqual({ code: 0, out: `nas ([127.0.0.1]:${sshd.port}) is already trusted: ssh-ed25519 ${sshd.fingerprint}.\n`, err: "" });
  });
});

describe.skipIf(missing !== null)("exec on an SSH host through the daemon", () => {
  it("the owner's chat runs a command on nas and the model gets the remote output", async () => {
    const fake = await startFakeModel();
    const home = makeHome({ heartbeat: { every: "0" }, tools: { exec: { hosts: hostsFor({ env: { WHERE: "on nas" } }) } } });
    const daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "sk-ant-api03-hosts-test-0123456789abcdef", ANTHROPIC_BASE_URL: fake.url });
    try {
      fake.enqueue({ type: "message", blocks: [{ tool: "exec", input: { command: 'echo "$WHERE"', host: "nas" } }] }, text("It says: on nas."));
      const r = await daemon.hearth(["chat", "-m", "where are you?"], { timeoutMs: 60_000 });
      expect(r.stdout).toBe("It says: on nas.\n");
      const result = lastUserContent(fake.requests[1]!).find((b) => b.type === "tool_result");
      expect(result?.content).toBe("on nas\n[exit code 0]");
    } finally {
      await cleanupDaemon(daemon, home);
      await fake.close();
    }
  }, E2E_WAIT_MS);
});
