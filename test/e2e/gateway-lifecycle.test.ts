// Starting, stopping and crashing the daemon: nothing accepted is lost, nothing answered twice.
import { daemonNodeArgs } from "../../bench/support/daemon-args.ts";
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator } from "../support/telegram-emulator.ts";

let fake: FakeModel;
const daemons: Daemon[] = [];
let home: string;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  for (const d of daemons.splice(0)) await cleanupDaemon(d, undefined).catch(() => {});
  await cleanupDaemon(undefined, home);
  await fake.close();
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
async function start(): Promise<Daemon> {
  const d = await startDaemon(home, env());
  daemons.push(d);
  return d;
}
const transcript = () =>
  readFileSync(join(home, "sessions", "main.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; status?: string; message?: { role: string; content?: Array<{ type: string; text?: string }> } });
const finalAnswers = (answer: string) =>
  transcript().filter((l) => l.type === "message" && l.message?.role === "assistant" && l.message.content?.some((b) => b.text === answer)).length;

describe("daemon lifecycle (e2e)", () => {
  it("answers a message exactly once after kill -9 during its run", async () => {
    home = makeHome({});
    const first = await start();
    fake.enqueue({ type: "hang" });
    const client = first.hearth(["chat", "-m", "remember the crash test"]);
    await fake.waitForRequests(1);
    first.proc.kill("SIGKILL");
    await first.exited;
    const lost = await client;
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/daemon went away/);

    fake.enqueue(text("Answered after the restart."));
    const second = await start();
    await waitFor("the replayed message to be answered", () => finalAnswers("Answered after the restart.") === 1);
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain("remember the crash test");
    await second.stop();

    // A third start has nothing left to replay: recovery is planned before the daemon is ready.
    const third = await start();
    expect(third.log()).not.toContain("inbox.recovering");
    expect(inboxSettled(home)).toBe(true);
    expect(fake.requests).toHaveLength(2);
    expect(finalAnswers("Answered after the restart.")).toBe(1);
    await third.stop();
  });

  it("a SIGTERM while a channel is still starting (the control socket already up) is a clean stop, not a kill", async () => {
    const emu = await startTelegramEmulator();
    try {
      // getMe never answers: start-up waits for the channel, with the control socket live.
      emu.inject({ method: "getMe", reply: "hang", times: 5 });
      home = makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: ["1"] } } });
      const proc = spawn(process.execPath, [...daemonNodeArgs(), hearthBin, "start"], { env: isolatedEnv({ HEARTH_HOME: home, HEARTH_LOG: "debug", ...env(), TELEGRAM_BOT_TOKEN: emu.token }), cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
      let log = "";
      proc.stdout!.on("data", (d: Buffer) => (log += d.toString()));
      proc.stderr!.on("data", (d: Buffer) => (log += d.toString()));
      const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
      await waitFor("the getMe call", () => emu.callsTo("getMe").length > 0, 15_000);
      expect(log).not.toContain("gateway.ready");
      proc.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(log).toContain("gateway.stopping");
    } finally {
      await emu.stop();
    }
  });

  it("refuses a second gateway on the same home with exit 2 and the holder's pid", async () => {
    home = makeHome({});
    const d = await start();
    // Only the owner may talk to the daemon.
    expect(statSync(join(home, "gateway.sock")).mode & 0o777).toBe(0o600);
    const second = await d.hearth(["start"]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`pid ${d.proc.pid}`);
    expect(d.proc.exitCode).toBeNull();
  });

  it("takes over the lock of a dead gateway", async () => {
    home = makeHome({});
    const d = await start();
    d.proc.kill("SIGKILL");
    await d.exited;
    const again = await start();
    expect((await again.hearth(["status", "--json"])).code).toBe(0);
  });

  it("on SIGTERM during a run, stops within the grace period and leaves a consistent transcript", async () => {
    home = makeHome({ agent: { shutdownGraceMs: 1000 } });
    const d = await start();
    fake.enqueue(text("This answer streams far too slowly to finish. ".repeat(20), { chunkSize: 3, chunkDelayMs: 50 }));
    const client = d.hearth(["chat", "-m", "tell me a long story"]);
    await fake.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    d.proc.kill("SIGTERM");
    const code = await d.exited;
    const elapsed = Date.now() - t0;
    expect(code).toBe(0);
    // The grace period, plus what a loaded machine takes to exit.
    expect(elapsed).toBeLessThan(1000 + 5000);
    const out = await client;
    expect(out.stdout).toContain("(Interrupted: Hearth is shutting down.)");
    const lines = transcript();
    expect(lines.at(-1)).toMatchObject({ type: "run", status: "aborted" });
    expect(lines.at(-2)).toMatchObject({ type: "message", message: { role: "assistant", stop: "aborted" } });
    expect(d.log()).toContain("gateway.stopped");
  });

  it("reports channels, sessions and today's tokens in hearth status --json", async () => {
    home = makeHome({});
    const d = await start();
    fake.enqueue(text("hello", { usage: { input_tokens: 100, output_tokens: 5, cache_read_input_tokens: 2000, cache_creation_input_tokens: 50 } }));
    expect((await d.hearth(["chat", "-m", "hi"])).code).toBe(0);
    const r = await d.hearth(["status", "--json"]);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout);
    expect(status.running).toBe(true);
    expect(status.channels).toContainEqual(expect.objectContaining({ id: "cli", state: "running" }));
    expect(status.sessions).toContainEqual(expect.objectContaining({ key: "main", scope: "main", running: false, contextTokens: 2150 }));
    expect(status.today).toMatchObject({ inputTokens: 100, outputTokens: 5, cacheReadTokens: 2000, cacheCreationTokens: 50, runs: 1 });
    const text_ = await d.hearth(["status"]);
    expect(text_.stdout).toMatch(/Hearth is running \(pid \d+/);
  });

  it("refuses a message longer than the limit on the command line with exit 2", async () => {
    home = makeHome({});
    const { runHearth, isolatedEnv } = await import("../support/cli-process.ts");
    const r = await runHearth(["chat", "-m", "y".repeat(100_001)], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/too long for me \(100,001 characters/);
    expect(fake.requests).toHaveLength(0);
  });

  it("hearth status without a daemon says so and exits 1", async () => {
    home = makeHome({});
    const { runHearth, isolatedEnv } = await import("../support/cli-process.ts");
    const r = await runHearth(["status"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not running.*hearth start/);
  });
});
