// Hearth under pm2, the way the README runs it: ready, stopped cleanly, logs under the home.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

const run = promisify(execFile);
const pm2Bin = join(repoRoot, "node_modules", "pm2", "bin", "pm2");

let fake: FakeModel;
let base: string;
let env: NodeJS.ProcessEnv;
let pm2Problem: string | null = null;

const pm2 = (...args: string[]) => run(process.execPath, [pm2Bin, ...args], { env, cwd: repoRoot, timeout: 60_000 });

/** The hearth app as `pm2 jlist` shows it. */
async function pm2State(): Promise<{ status: string; pid: number }> {
  const list = JSON.parse((await pm2("jlist")).stdout) as Array<{ name: string; pid: number; pm2_env: { status: string } }>;
  const app = list.find((a) => a.name === "hearth")!;
  return { status: app.pm2_env.status, pid: app.pid };
}

beforeAll(async () => {
  fake = await startFakeModel();
  base = mkdtempSync(join(tmpdir(), "hearth-pm2-"));
  const home = join(base, "home");
  env = isolatedEnv({ HEARTH_HOME: home, PM2_HOME: join(base, "pm2"), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url, HEARTH_LOG: "info" });
  await runHearth(["init"], env);
  writeFileSync(join(home, "config.json"), JSON.stringify({ agent: { shutdownGraceMs: 1000 } }), { mode: 0o600 });
  try {
    await pm2("ping");
  } catch (err) {
    pm2Problem = (err as Error).message.split("\n")[0] ?? "unknown error";
  }
});

afterAll(async () => {
  await pm2("kill").catch(() => {});
  await fake.close();
  rmSync(base, { recursive: true, force: true });
});

describe("pm2", () => {
  it("starts the daemon, sees it ready, stops it, and finds a clean shutdown in its log", async (ctx) => {
    if (pm2Problem) ctx.skip(`pm2 cannot run here: ${pm2Problem}`);
    await pm2("start", join(repoRoot, "ecosystem.config.cjs"));
    const list = JSON.parse((await pm2("jlist")).stdout) as Array<{ name: string; pm2_env: { status: string; kill_timeout: number } }>;
    const app = list.find((a) => a.name === "hearth")!;
    expect(app.pm2_env.status).toBe("online");
    expect(app.pm2_env.kill_timeout).toBeGreaterThan(1000);

    fake.enqueue(text("Hello from under pm2."));
    const chat = await runHearth(["chat", "-m", "are you there?"], env);
    expect(chat.stdout.trim()).toBe("Hello from under pm2.");

    const stopStarted = Date.now();
    await pm2("stop", "hearth");
    // pm2 waits for the process to exit (or kill_timeout, then SIGKILL) before it returns.
    const stopMs = Date.now() - stopStarted;
    const out = join(env.HEARTH_HOME!, "logs", "hearth.out.log");
    const err = join(env.HEARTH_HOME!, "logs", "hearth.err.log");
    await waitFor("the shutdown in the log", () => readFileSync(out, "utf8").includes("gateway.stopped"), 20_000);
    // Info lines go to stdout (pm2's out log); stderr (shown red by pm2) only gets problems.
    const info = readFileSync(out, "utf8");
    expect(info).toContain("gateway.ready");
    expect(info).toMatch(/"event":"gateway.stopping","signal":"SIGINT"/);
    const answered = info.split("\n").filter((l) => l.includes('"event":"run.done"')).map((l) => JSON.parse(l));
    expect(answered).toHaveLength(1);
    expect(answered[0]).toMatchObject({ level: "info", session: "main", channel: "cli", status: "completed", messages: 1 });
    expect(answered[0].durationMs).toEqual(expect.any(Number));
    expect(answered[0].inputTokens).toBeGreaterThan(0);
    expect(answered[0].outputTokens).toBeGreaterThan(0);
    for (const line of readFileSync(err, "utf8").split("\n").filter(Boolean)) expect(JSON.parse(line).level).toMatch(/^(warn|error)$/);
    // The daemon exited on its own: pm2 did not have to kill it.
    const pm2Log = readFileSync(join(env.PM2_HOME!, "pm2.log"), "utf8");
    expect(pm2Log).not.toMatch(/SIGKILL/);
    expect(pm2Log).toMatch(/App \[hearth:\d+\] exited with code \[0\]/);
    console.log(`pm2 stop took ${stopMs} ms`);
    expect((await runHearth(["status"], env)).code).toBe(1);
  });

  it("hearth stop, restart and start act through pm2 and say so; pm2 restart works after a hearth stop", async (ctx) => {
    if (pm2Problem) ctx.skip(`pm2 cannot run here: ${pm2Problem}`);
    await pm2("start", join(repoRoot, "ecosystem.config.cjs"));
    const first = await pm2State();
    expect(first.status).toBe("online");
    await waitFor("the daemon answers", async () => (await runHearth(["status"], env)).code === 0);

    expect(await runHearth(["stop"], env)).toEqual({ code: 0, stdout: `Stopped Hearth under pm2 (it was pid ${first.pid}).\n`, stderr: "" });
    expect(await pm2State()).toEqual({ status: "stopped", pid: 0 });
    expect(await runHearth(["stop"], env)).toEqual({ code: 0, stdout: "Hearth is not running (it is stopped under pm2).\n", stderr: "" });

    // After a hearth stop, hearth restart starts it again under pm2, which lists it online.
    const restarted = await runHearth(["restart"], env);
    const second = await pm2State();
    expect(second.status).toBe("online");
    expect(second.pid).not.toBe(first.pid);
    expect(restarted).toEqual({ code: 0, stdout: `Started Hearth under pm2 (pid ${second.pid}).\n`, stderr: "" });

    const again = await runHearth(["restart"], env);
    const third = await pm2State();
    expect(third.status).toBe("online");
    expect(again).toEqual({ code: 0, stdout: `Restarted Hearth under pm2 (pid ${third.pid}; it was pid ${second.pid}).\n`, stderr: "" });
    // A start from a terminal does not run a second daemon beside pm2's.
    expect(await runHearth(["start"], env)).toEqual({ code: 0, stdout: `Hearth is already running under pm2 (pid ${third.pid}).\n`, stderr: "" });

    // pm2's own restart after a hearth stop: nothing outside pm2 holds the home.
    expect((await runHearth(["stop"], env)).stdout).toBe(`Stopped Hearth under pm2 (it was pid ${third.pid}).\n`);
    await pm2("restart", "hearth");
    await waitFor("pm2 lists it online", async () => (await pm2State()).status === "online");
    const fourth = await pm2State();
    expect(fourth.pid).not.toBe(third.pid);
    await waitFor("the daemon answers", async () => (await runHearth(["status"], env)).code === 0);
    expect(JSON.parse((await runHearth(["status", "--json"], env)).stdout).pid).toBe(fourth.pid);

    // A start from a terminal while pm2 holds it stopped goes through pm2 too.
    expect((await runHearth(["stop"], env)).code).toBe(0);
    const started = await runHearth(["start"], env);
    const fifth = await pm2State();
    expect(fifth.status).toBe("online");
    expect(started).toEqual({ code: 0, stdout: `Started Hearth under pm2 (pid ${fifth.pid}).\n`, stderr: "" });
    expect((await runHearth(["stop"], env)).code).toBe(0);
  });

  it("does not restart a daemon whose configuration is wrong (no key), and its log says what to fix", async (ctx) => {
    if (pm2Problem) ctx.skip(`pm2 cannot run here: ${pm2Problem}`);
    const home = join(base, "home-no-key");
    const noKey = isolatedEnv({ HEARTH_HOME: home, PM2_HOME: join(base, "pm2-no-key"), HEARTH_LOG: "info" });
    const pm2NoKey = (...args: string[]) => run(process.execPath, [pm2Bin, ...args], { env: noKey, cwd: repoRoot, timeout: 60_000 });
    try {
      await pm2NoKey("start", join(repoRoot, "ecosystem.config.cjs")).catch(() => {});
      const err = join(home, "logs", "hearth.err.log");
      await waitFor("the error in the log", () => existsSync(err) && readFileSync(err, "utf8").includes("ANTHROPIC_API_KEY"), 30_000);
      const pm2Log = join(noKey.PM2_HOME!, "pm2.log");
      await waitFor("pm2 to see the exit", () => /App \[hearth:\d+\] exited with code \[2\]/.test(readFileSync(pm2Log, "utf8")), 30_000);
      // Long enough for pm2's restarts (200 ms, then 300, 450...) to show, had it planned any.
      await sleep(3000);
      const list = JSON.parse((await pm2NoKey("jlist")).stdout) as Array<{ name: string; pid: number; pm2_env: { status: string; restart_time: number } }>;
      const app = list.find((a) => a.name === "hearth")!;
      expect(app.pm2_env.restart_time).toBeLessThanOrEqual(1);
      // pm2 7 labels it "waiting restart" (its exponential backoff sets that label before it
      // looks at stop_exit_codes), but schedules nothing: no process, no more exits.
      expect(app.pm2_env.status).not.toBe("online");
      expect(app.pid).toBe(0);
      expect(readFileSync(pm2Log, "utf8").match(/exited with code \[2\]/g)!.length).toBeLessThanOrEqual(2);
      const log = readFileSync(err, "utf8");
      expect(log).toContain("export ANTHROPIC_API_KEY=sk-ant-...");
      expect(log).toContain("pm2 will not restart Hearth until this is fixed. Then: npx hearth restart\n");
      // What it says works: with the key, hearth restart starts it again under pm2.
      const fixed = await runHearth(["restart"], { ...noKey, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
      const now = JSON.parse((await pm2NoKey("jlist")).stdout) as Array<{ name: string; pid: number; pm2_env: { status: string } }>;
      expect(now[0]!.pm2_env.status).toBe("online");
      expect(fixed).toEqual({ code: 0, stdout: `Started Hearth under pm2 (pid ${now[0]!.pid}).\n`, stderr: "" });
      expect((await runHearth(["stop"], noKey)).stdout).toBe(`Stopped Hearth under pm2 (it was pid ${now[0]!.pid}).\n`);
    } finally {
      await pm2NoKey("kill").catch(() => {});
    }
  });
});
