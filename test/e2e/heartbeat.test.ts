// `hearth heartbeat --now` end to end: the real daemon and the fake model; the CLI prints what
// the heartbeat would send, and nothing is sent or added to the conversation.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon | undefined;
let home: string | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  daemon = undefined;
  home = undefined;
  await fake.close();
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });

async function start(activeHours = { start: "00:00", end: "00:00" }): Promise<Daemon> {
  home = makeHome({ timezone: "UTC", heartbeat: { every: "6h", activeHours } });
  daemon = await startDaemon(home, env());
  return daemon;
}

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

describe("hearth heartbeat --now", () => {
  it("prints the message the heartbeat would send, sends nothing and leaves main untouched; then a quiet one", async () => {
    const d = await start();
    fake.enqueue(text("Water the plants: it has been three days."));
    const r = await d.hearth(["heartbeat", "--now"], { timeoutMs: 30_000 });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("The heartbeat would send this to cli (not sent):\n\nWater the plants: it has been three days.\n");
    expect(r.code).toBe(0);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.model).toBe("claude-haiku-4-5");
    expect(existsSync(join(d.home, "sessions", "main.jsonl"))).toBe(false);
    expect(d.log()).not.toContain("heartbeat.delivered");

    fake.enqueue(text("HEARTBEAT_OK"));
    const quiet = await d.hearth(["heartbeat", "--now"], { timeoutMs: 30_000 });
    expect(quiet.stdout).toBe("The heartbeat would stay quiet (the model answered HEARTBEAT_OK).\n");
    expect(quiet.code).toBe(0);
  });

  it("says when a scheduled heartbeat would not run now, and runs this one anyway", async () => {
    const now = Date.now();
    const hours = { start: hhmm(now + 3 * 3_600_000), end: hhmm(now + 4 * 3_600_000) };
    const d = await start(hours);
    fake.enqueue(text("HEARTBEAT_OK"));
    const r = await d.hearth(["heartbeat", "--now"], { timeoutMs: 30_000 });
    expect(r.stdout).toBe(
      `The heartbeat would stay quiet (the model answered HEARTBEAT_OK).\nA scheduled heartbeat would not run now: it is outside heartbeat.activeHours (${hours.start}–${hours.end}).\n`,
    );
    expect(r.code).toBe(0);
  });

  it("does not call the model when HEARTBEAT.md has no items", async () => {
    const d = await start();
    writeFileSync(join(d.home, "workspace", "HEARTBEAT.md"), "<!-- nothing to check -->\n# Heartbeat\n");
    const r = await d.hearth(["heartbeat", "--now"], { timeoutMs: 30_000 });
    expect(r.stdout).toBe("The heartbeat did not run: HEARTBEAT.md has no checklist items (only headings or comments, or no file).\n");
    expect(r.code).toBe(0);
    expect(fake.requests).toHaveLength(0);
  });

  it("needs the daemon and --now", async () => {
    home = makeHome({ timezone: "UTC" });
    const noDaemon = await runHearth(["heartbeat", "--now"], isolatedEnv({ HEARTH_HOME: home, ...env() }));
    expect(noDaemon.code).toBe(1);
    expect(noDaemon.stderr).toBe(`hearth: Hearth is not running on ${home}, and only the daemon runs the heartbeat. Start it with: npx hearth start\n`);
    const bare = await runHearth(["heartbeat"], isolatedEnv({ HEARTH_HOME: home, ...env() }));
    expect(bare.code).toBe(2);
    expect(bare.stderr.split("\n")[0]).toBe("hearth: heartbeat needs --now.");
  });
});
