// The real daemon on a home whose state files are damaged in the ways found in the wild: it
// starts, answers, names each file (log, `hearth status`, `hearth doctor`) and keeps every
// damaged original beside it.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon | undefined;
let home: string;
beforeEach(async () => {
  fake = await startFakeModel();
  home = makeHome({ heartbeat: { every: "0" } });
  mkdirSync(join(home, "sessions"));
  mkdirSync(join(home, "cron"));
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  daemon = undefined;
  await fake.close();
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
const logEvents = (d: Daemon) =>
  d
    .log()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { event: string; file?: string; lines?: number[] });

const DAMAGED = {
  "sessions/index.json": '{"version":1,"sessions":"oops","today":null}',
  "pairing.json": '{"pending":[],"approved":[{"channel":"telegram","userId":"42","na',
  "cron/jobs.json": '{"version":1,"jobs":[{"id":"morning","name":"Morning","schedule":{"kind":"every","every":"1h"},"prompt":"news"},{"id":"ev',
};

describe("damaged state files (e2e)", () => {
  it("the daemon starts, answers, names each damaged file and keeps the originals", async () => {
    for (const [rel, content] of Object.entries(DAMAGED)) writeFileSync(join(home, rel), content);
    const userLine = JSON.stringify({ type: "message", message: { role: "user", kind: "message", text: "my cat is Miso", ts: 1 } });
    writeFileSync(
      join(home, "sessions", "main.jsonl"),
      `${JSON.stringify({ type: "session", version: 1, key: "main", ts: 1 })}\n{"type":"message","message":null}\n${userLine}\n`,
    );
    writeFileSync(join(home, "cron", "runs.jsonl"), 'null\n{"status":"ok"}\n');

    daemon = await startDaemon(home, env());
    fake.enqueue(text("Still here."));
    const answer = await daemon.hearth(["chat", "-m", "are you there?"]);
    expect(answer.code).toBe(0);
    expect(answer.stdout.trim()).toBe("Still here.");
    expect(fake.requests).toHaveLength(1);
    // The null record was skipped, the good history around it kept.
    const sent = JSON.stringify(fake.requests[0]!.body.messages);
    expect(sent).toContain("my cat is Miso");
    expect(sent).toContain("are you there?");

    // Each file named in the log, with what happened to it.
    const events = logEvents(daemon).filter((e) => e.event.startsWith("state."));
    expect(events.map((e) => [e.event, e.file, e.lines]).sort()).toEqual(
      [
        ["state.file_damaged", join(home, "cron", "jobs.json"), undefined],
        ["state.file_damaged", join(home, "pairing.json"), undefined],
        ["state.records_dropped", join(home, "sessions", "index.json"), undefined],
        ["state.records_skipped", join(home, "cron", "runs.jsonl"), [1, 2]],
        ["state.records_skipped", join(home, "sessions", "main.jsonl"), [2]],
      ].sort(),
    );

    // The originals, byte for byte, under their .damaged- names.
    const copies: Record<string, string> = {};
    for (const dir of ["", "sessions", "cron"]) {
      for (const name of readdirSync(join(home, dir)).filter((n) => n.includes(".damaged-"))) copies[join(dir, name.replace(/\.damaged-.*$/, ""))] = join(dir, name);
    }
    expect(Object.keys(copies).sort()).toEqual(Object.keys(DAMAGED).sort());
    for (const [rel, content] of Object.entries(DAMAGED)) expect(readFileSync(join(home, copies[rel]!), "utf8")).toBe(content);

    // `hearth status` and `hearth doctor`: one line per damaged file.
    const expected = Object.keys(DAMAGED)
      .sort()
      .map((rel) => `${rel} was damaged; the original is kept as ${copies[rel]} and Hearth went on with what it could read`);
    const status = await daemon.hearth(["status"]);
    expect(status.code).toBe(0);
    const statusLines = status.stdout.split("\n").filter((l) => l.startsWith("Damaged state: "));
    expect(statusLines.sort()).toEqual(expected.map((l) => `Damaged state: ${l}`).sort());
    const doctor = await daemon.hearth(["doctor"]);
    const doctorLines = doctor.stdout.split("\n").filter((l) => l.startsWith("✗ state: ") || l.includes("look at the kept copy"));
    expect(doctorLines.filter((l) => l.startsWith("✗")).sort()).toEqual(expected.map((l) => `✗ state: ${l}`).sort());
    expect(doctorLines.filter((l) => !l.startsWith("✗"))).toEqual(Array(3).fill("    fix: look at the kept copy (restore what you need by hand), then delete it"));

    // `hearth cron list` does not just say "No scheduled jobs": it points at the kept copy.
    const list = await daemon.hearth(["cron", "list"]);
    expect(list.stdout).toBe('No scheduled jobs. Add one with: npx hearth cron add --name N --every 1h --message "TEXT"\n');
    expect(list.stderr).toBe(`Note: ${expected.find((l) => l.startsWith("cron/"))}.\n`);

    const pairing = await daemon.hearth(["pairing", "list"]);
    expect(pairing.stdout).toBe("Pending codes: none\nApproved senders: none\n");
    expect(pairing.stderr).toBe(`Note: ${expected.find((l) => l.startsWith("pairing"))}.\n`);

    // The scheduler works again: a job can be added, and jobs.json is valid.
    const add = await daemon.hearth(["cron", "add", "--name", "Again", "--every", "1h", "--message", "news"]);
    expect(add.code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "cron", "jobs.json"), "utf8")).jobs.map((j: { name: string }) => j.name)).toEqual(["Again"]);
    await daemon.stop();
  });
});
