// The exec sandbox: what a command can reach with bubblewrap and without it, and that nothing
// it started outlives it. The bwrap tests need bubblewrap; without it they say so and skip.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createExecTool, runCommand } from "../../../src/agent/tools/exec.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { testEgress } from "../../support/egress.ts";
import {
  probeBwrap,
  resolveExecSandbox,
  sandboxedCommand,
  SandboxUnavailableError,
  type ExecSandbox,
} from "../../../src/agent/tools/sandbox.ts";
import { registerSecret } from "../../../src/process/log.ts";

const probe = probeBwrap();
if (!probe.ok) console.warn(`exec sandbox tests skipped: ${probe.detail} (install bubblewrap to run them)`);
const noBwrap = !probe.ok;

let home: string;
let workspace: string;
beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(tmpdir(), "hearth-sbx-")));
  workspace = path.join(home, "workspace");
  mkdirSync(workspace);
  writeFileSync(path.join(home, "config.json"), '{ "model": { "apiKey": "sk-ant-in-config" } }\n');
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** The notes at the workspace's top level whose words enter a context (memory/context-paths.ts). */
const NOTES = ["SOUL.md", "IDENTITY.md", "AGENTS.md", "USER.md", "MEMORY.md", "HEARTBEAT.md"];
const writeNotes = () => {
  for (const n of NOTES) writeFileSync(path.join(workspace, n), `# ${n}\n`);
};

const sandbox = (network = true): ExecSandbox => resolveExecSandbox({ mode: "bwrap", network, home, workspace });
const unsandboxed = (): ExecSandbox => resolveExecSandbox({ mode: "off", network: true, home, workspace });
const run = (sb: ExecSandbox, command: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
  runCommand({ command, cwd: workspace, timeoutMs: opts.timeoutMs ?? 20_000, signal: opts.signal ?? new AbortController().signal, sandbox: sb });

/** A `sleep` whose command line no other process has: `sleep 1000.<random>`. */
const uniqueSleep = () => `1000.${Math.floor(Math.random() * 1e9)}`;

/** Live processes whose command line is exactly `sleep <arg>` (zombies have an empty cmdline). */
function sleepersWith(arg: string): number[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, "utf8") === `sleep\0${arg}\0`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const leftovers: string[] = [];
afterAll(() => {
  for (const arg of leftovers) for (const pid of sleepersWith(arg)) process.kill(pid, "SIGKILL");
});

describe("resolveExecSandbox", () => {
  const missing = () => ({ ok: false as const, why: "missing" as const, detail: "bubblewrap (bwrap) is not installed", fix: "install it: sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat)" });

  it('"off" never runs bwrap', () => {
    let probed = false;
    const sb = resolveExecSandbox({ mode: "off", network: true, home, workspace, probe: () => ((probed = true), missing()) });
    expect(sb).toEqual({ kind: "none", mode: "off", why: "off", detail: 'tools.exec.sandbox is "off"' });
    expect(probed).toBe(false);
  });

  it('"auto" without bwrap refuses every command with one sentence naming the fix; "off" runs them', async () => {
    const sb = resolveExecSandbox({ mode: "auto", network: true, home, workspace, probe: missing });
    expect(sb).toEqual({
      kind: "none",
      mode: "auto",
      why: "missing",
      detail: "bubblewrap (bwrap) is not installed",
      fix: "install it: sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat)",
    });
    const c = { signal: new AbortController().signal, workspace, scope: "main" as const, sessionKey: "main", log: silentLogger };
    writeFileSync(path.join(workspace, "ran"), "no\n");
    expect(await createExecTool({ defaultTimeoutMs: 10_000, sandbox: sb }).execute({ command: "echo yes > ran" }, c)).toEqual({
      content:
        'Commands cannot run: bubblewrap (bwrap) is not installed, and Hearth runs commands only in its sandbox. The owner can install it: sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat) (or set tools.exec.sandbox to "off" to run commands unconfined).',
      isError: true,
    });
    expect(readFileSync(path.join(workspace, "ran"), "utf8")).toBe("no\n");
    const off = resolveExecSandbox({ mode: "off", network: true, home, workspace, probe: missing });
    expect(await createExecTool({ defaultTimeoutMs: 10_000, sandbox: off }).execute({ command: "echo yes > ran" }, c)).toEqual({ content: "[exit code 0]", isError: false });
    expect(readFileSync(path.join(workspace, "ran"), "utf8")).toBe("yes\n");
  });

  it('"bwrap" without bwrap refuses with the install command', () => {
    const attempt = () => resolveExecSandbox({ mode: "bwrap", network: true, home, workspace, probe: missing });
    expect(attempt).toThrow(SandboxUnavailableError);
    expect(attempt).toThrow(
      'tools.exec.sandbox is "bwrap" but bubblewrap (bwrap) is not installed.\n' +
        "  Install it: sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat)\n",
    );
  });

  it("a bwrap that exists but cannot create namespaces counts as not working", () => {
    const bin = path.join(home, "bin");
    mkdirSync(bin);
    writeFileSync(path.join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", { mode: 0o755 });
    writeFileSync(path.join(bin, "socat"), "#!/bin/sh\n", { mode: 0o755 });
    const result = probeBwrap({ PATH: bin });
    // The cause and its fix depend on the machine (a container, AppArmor's restriction, a sysctl).
    expect(result).toEqual({
      ok: false,
      why: "broken",
      detail: expect.stringMatching(new RegExp(`^${bin}/bwrap cannot create namespaces here \\(bwrap: No permissions to create new namespace\\); (Hearth runs inside a container|AppArmor restricts|the kernel disables|user namespaces)`)),
      fix: expect.any(String),
    });
  });

  it("hides the home under a tmpfs, then binds the workspace inside it back with its notes read-only, and Hearth's own install read-only", () => {
    // Hearth's folder stays readable even where it lies under /tmp (a checkout there runs its own Node and MCP servers).
    const installRoot = realpathSync(fileURLToPath(new URL("../../../", import.meta.url)));
    writeNotes();
    const sb: ExecSandbox = { kind: "bwrap", bwrap: "/usr/bin/bwrap", network: false, workspace, hidden: [home], socat: null };
    const { file, args } = sandboxedCommand(sb, "ls", workspace);
    expect(file).toBe("/usr/bin/bwrap");
    const ro = [...NOTES, "memory", "skills"].map((n) => `--ro-bind-try ${workspace}/${n} ${workspace}/${n}`).join(" ");
    expect(args.join(" ")).toBe(
      `--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --unshare-pid --die-with-parent --tmpfs ${home} --bind ${workspace} ${workspace} ${ro} --ro-bind ${installRoot} ${installRoot} --unshare-net --chdir ${workspace} -- bash -c ls`,
    );
  });
});

describe("the exec tool's description", () => {
  it("tells the model what the sandbox allows, and says nothing extra without one", () => {
    const base =
      "Run a bash command in the workspace folder; returns stdout and stderr interleaved, then the exit code. Killed after 120 s unless timeoutMs is given. Background processes end with the command.";
    const boxed: ExecSandbox = { kind: "bwrap", bwrap: "/usr/bin/bwrap", network: false, workspace, hidden: [home], socat: null };
    expect(createExecTool({ defaultTimeoutMs: 120_000, sandbox: boxed }).description).toBe(
      `${base} Sandboxed: only the workspace is writable, except its notes (SOUL.md, IDENTITY.md, AGENTS.md, USER.md, MEMORY.md, HEARTBEAT.md, memory/, skills/), which are read-only (change them with the file tools); a private /tmp is emptied afterwards; Hearth's own files are not visible; no network.`,
    );
    expect(createExecTool({ defaultTimeoutMs: 120_000 }).description).toBe(base);
  });
});

describe.skipIf(noBwrap)("exec in bubblewrap", () => {
  it("cannot see Hearth's home outside the workspace, but can use the workspace", async () => {
    writeNotes();
    writeFileSync(path.join(workspace, "note.md"), "hello\n");
    // One stream (2>&1): the order of two pipes' output is not fixed on a loaded machine.
    const out = await run(sandbox(), `cat ${home}/config.json 2>&1; ls -A ${home}; cat note.md; echo new > made.txt`);
    expect(out.content).toBe(`cat: ${home}/config.json: No such file or directory\nworkspace\nhello\n[exit code 0]`);
    expect(readdirSync(workspace).sort()).toEqual([...NOTES, "made.txt", "memory", "note.md", "skills"].sort());
    expect(readFileSync(path.join(workspace, "made.txt"), "utf8")).toBe("new\n");
  });

  it("cannot write outside the workspace", async () => {
    const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "hearth-outside-")));
    try {
      const out = await run(sandbox(), `echo x > ${outside}/f; touch /etc/hearth-sbx-test`);
      expect(out.content).toBe(`bash: line 1: ${outside}/f: No such file or directory\ntouch: cannot touch '/etc/hearth-sbx-test': Read-only file system\n[exit code 1]`);
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("cannot read another process's environment, nor find it in /proc", async () => {
    const secret = "sk-ant-unit-sandbox-secret-000111";
    const other = spawnHolder(secret);
    try {
      // The refusal on the same stream as the count (2>&1): two pipes' order is not fixed under load.
      const out = await run(sandbox(), `{ tr '\\0' '\\n' < /proc/${other.pid}/environ; } 2>&1; cat /proc/*/environ | tr '\\0' '\\n' | grep -c '^ANTHROPIC_API_KEY='`);
      expect(out.content).toBe(`bash: line 1: /proc/${other.pid}/environ: No such file or directory\n0\n[exit code 1]`);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("reaches a local server only through the egress proxy with network on, and nothing with network off", async () => {
    const hits: string[] = [];
    const server: Server = createServer((req, res) => (hits.push(req.url ?? ""), res.end("ok")));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const egress = testEgress({ allowPrivate: ["127.0.0.1"] });
    const requester = { what: "exec: test", session: "main", permit: async () => null };
    const withProxy = (sb: ExecSandbox, command: string) =>
      runCommand({ command, cwd: workspace, timeoutMs: 20_000, signal: new AbortController().signal, sandbox: sb, egress: { egress, requester } });
    try {
      const direct = `(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo unreachable`;
      expect((await withProxy(sandbox(true), direct)).content).toBe("unreachable\n[exit code 0]");
      expect((await withProxy(sandbox(true), `curl -sS http://127.0.0.1:${port}/via-proxy`)).content).toBe("ok\n[exit code 0]");
      expect((await run(sandbox(false), `curl -sS http://127.0.0.1:${port}/no-network 2>&1 | head -c 0; echo rc=\${PIPESTATUS[0]}`)).content).toBe("rc=7\n[exit code 0]");
      expect(hits).toEqual(["/via-proxy"]);
      expect(egress.records).toEqual([{ host: "127.0.0.1", port, protocol: "http", decision: "connected", sent: 0, received: 2, what: "exec: test", session: "main" }]);
    } finally {
      server.close();
    }
  });

  it("a setsid'ed background process dies with the command", async () => {
    const arg = uniqueSleep();
    leftovers.push(arg);
    const out = await run(sandbox(), `setsid sleep ${arg} & (setsid sleep ${arg} &); sleep 0.2; echo started`);
    expect(out.content).toBe("started\n[exit code 0]");
    await waitUntil(() => sleepersWith(arg).length === 0);
  });

  it("a setsid'ed process is gone after the timeout", async () => {
    const arg = uniqueSleep();
    leftovers.push(arg);
    const out = await run(sandbox(), `setsid sleep ${arg} & sleep 60`, { timeoutMs: 500 });
    expect(out.content).toBe("[killed: timed out after 0.5 s]");
    await waitUntil(() => sleepersWith(arg).length === 0);
  });

  it("a setsid'ed process is gone after an abort", async () => {
    const arg = uniqueSleep();
    leftovers.push(arg);
    const abort = new AbortController();
    const running = run(sandbox(), `setsid sleep ${arg} & sleep 60`, { signal: abort.signal });
    await waitUntil(() => sleepersWith(arg).length === 1);
    abort.abort();
    expect((await running).content).toBe("[killed: aborted]");
    await waitUntil(() => sleepersWith(arg).length === 0);
  });
});

describe("exec without a sandbox", () => {
  it("can read another process's environment through /proc: this is what the sandbox closes", async () => {
    const secret = "sk-ant-unit-unsandboxed-secret-222333";
    const other = spawnHolder(secret);
    try {
      const out = await run(unsandboxed(), `tr '\\0' '\\n' < /proc/${other.pid}/environ`);
      expect(out.content).toBe(`ANTHROPIC_API_KEY=${secret}\n[exit code 0]`);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("keeps registered secrets out of the command's environment, whatever the variable is called", async () => {
    const secret = "sk-ant-unit-registered-secret-444555";
    registerSecret(secret);
    process.env.SOME_OTHER_NAME = secret;
    try {
      const out = await run(unsandboxed(), `echo "[$SOME_OTHER_NAME]"`);
      expect(out.content).toBe("[]\n[exit code 0]");
    } finally {
      delete process.env.SOME_OTHER_NAME;
    }
  });

  it("kills a setsid'ed background process when the command ends, times out or is aborted", async () => {
    const [a, b, c] = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    leftovers.push(a, b, c);
    expect((await run(unsandboxed(), `setsid sleep ${a} & (setsid sleep ${a} &); sleep 0.2; echo started`)).content).toBe("started\n[exit code 0]");
    expect(sleepersWith(a)).toEqual([]);

    expect((await run(unsandboxed(), `(setsid sleep ${b} &); sleep 60`, { timeoutMs: 500 })).content).toBe("[killed: timed out after 0.5 s]");
    expect(sleepersWith(b)).toEqual([]);

    const abort = new AbortController();
    const running = run(unsandboxed(), `setsid sleep ${c} & sleep 60`, { signal: abort.signal });
    await waitUntil(() => sleepersWith(c).length === 1);
    abort.abort();
    expect((await running).content).toBe("[killed: aborted]");
    expect(sleepersWith(c)).toEqual([]);
  });
});

/** A process like the daemon: a secret in its environment since it started. */
function spawnHolder(secret: string): ChildProcess {
  return spawn("sleep", ["30"], { env: { ANTHROPIC_API_KEY: secret }, stdio: "ignore" });
}

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
