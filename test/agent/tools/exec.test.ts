import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/agent/tool.ts";
import { createExecTool, effectiveTimeoutMs } from "../../../src/agent/tools/exec.ts";
import { silentLogger } from "../../../src/process/log.ts";

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "hearth-exec-"));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const ctx = (signal = new AbortController().signal): ToolContext => ({
  signal,
  workspace,
  scope: "main",
  sessionKey: "main",
  log: silentLogger,
});

const exec = createExecTool({ defaultTimeoutMs: 120_000 });
const run = (input: { command: string; timeoutMs?: number }, signal?: AbortSignal) => exec.execute(input, ctx(signal));

/** Alive means signalable and not a zombie waiting for a slow reaper (PID 1 in containers). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe("ESRCH");
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function readPid(file: string): Promise<number> {
  return Number((await readFile(path.join(workspace, file), "utf8")).trim());
}

describe("exec", () => {
  it("returns the output and exit code 0", async () => {
    const out = await run({ command: "echo hearth-42" });
    expect(out.content).toBe("hearth-42\n[exit code 0]");
    expect(out.isError).toBe(false);
  });

  it("marks a nonzero exit as an error with its code", async () => {
    const out = await run({ command: "echo before; exit 3" });
    expect(out.content).toBe("before\n[exit code 3]");
    expect(out.isError).toBe(true);
  });

  it("captures stderr along with stdout", async () => {
    const out = await run({ command: "echo to-out; echo to-err >&2; sleep 0.05; echo out-again" });
    expect(out.content).toContain("to-out\n");
    expect(out.content).toContain("to-err\n");
    expect(out.content.indexOf("to-err")).toBeLessThan(out.content.indexOf("out-again"));
  });

  it("hides Hearth's own credentials from the command", async () => {
    process.env.TELEGRAM_BOT_TOKEN = "123456:secret-token-value";
    process.env.EMAIL_PASSWORD = "mailbox-app-password";
    try {
      const out = await run({ command: 'echo "token=[$TELEGRAM_BOT_TOKEN] mail=[$EMAIL_PASSWORD] home=[$HOME]"' });
      expect(out.content).toContain("token=[] mail=[]");
      expect(out.content).not.toContain("secret-token-value");
      expect(out.content).not.toContain("mailbox-app-password");
      expect(out.content).not.toContain("home=[]");
    } finally {
      delete process.env.TELEGRAM_BOT_TOKEN;
      delete process.env.EMAIL_PASSWORD;
    }
  });

  it("runs in the workspace folder", async () => {
    const out = await run({ command: "pwd -P" });
    expect(out.content.split("\n")[0]).toBe(await realpath(workspace));
  });

  it("kills the whole process group on timeout and waits for it", async () => {
    const started = Date.now();
    const out = await run({ command: "sleep 30 & echo $! > child.pid; wait", timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/\[killed: timed out after 0\.3 s\]$/);
    expect(isAlive(await readPid("child.pid"))).toBe(false);
  });

  it("escalates to SIGKILL for a child that ignores SIGTERM", async () => {
    const started = Date.now();
    const out = await run({
      command: "trap '' TERM; sh -c 'trap \"\" TERM; sleep 30' & echo $! > child.pid; wait",
      timeoutMs: 200,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(out.content).toContain("[killed: timed out");
    expect(isAlive(await readPid("child.pid"))).toBe(false);
  });

  it("kills the process group when the run is aborted", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = run({ command: "sleep 30 & echo $! > child.pid; wait" }, controller.signal);
    await sleep(300);
    controller.abort();
    const out = await pending;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/\[killed: aborted\]$/);
    expect(isAlive(await readPid("child.pid"))).toBe(false);
  });

  it("does not start when the run is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const out = await run({ command: "touch started" }, controller.signal);
    expect(out.isError).toBe(true);
    await expect(readFile(path.join(workspace, "started"))).rejects.toThrow();
  });

  it("keeps the first and last 512 KB of large output and says how much was dropped", async () => {
    const out = await run({ command: "echo START; head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END" });
    expect(out.isError).toBe(false);
    expect(out.content.startsWith("START\n")).toBe(true);
    expect(out.content).toMatch(/END\n\[exit code 0\]$/);
    const total = 6 + 3_000_000 + 1 + 4;
    const dropped = total - 1024 * 1024;
    expect(out.content).toContain(`[... ${dropped} bytes of output dropped ...]`);
    expect(out.content.length).toBeLessThan(1024 * 1024 + 200);
  });

  it("uses the configured default timeout and caps an override at 10 minutes", () => {
    expect(effectiveTimeoutMs(undefined, 120_000)).toBe(120_000);
    expect(effectiveTimeoutMs(5_000, 120_000)).toBe(5_000);
    expect(effectiveTimeoutMs(3_600_000, 120_000)).toBe(600_000);
    expect(exec.input.safeParse({ command: "true", timeoutMs: 3_600_000 }).success).toBe(true);
  });

  it("reports a failure to start instead of throwing", async () => {
    const out = await exec.execute({ command: "true" }, { ...ctx(), workspace: path.join(workspace, "missing") });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("Could not run the command");
  });

  it("summarizes a call as the command's first line, shortened", () => {
    expect(exec.summarize?.({ command: "ls -la\necho second" })).toBe("ls -la");
    const long = exec.summarize?.({ command: "x".repeat(200) }) ?? "";
    expect(long.length).toBeLessThanOrEqual(80);
  });
});
