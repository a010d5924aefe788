// The scheduler with fake time and a fake gateway: when jobs fire, what a restart does with
// missed, queued and interrupted runs, overlap protection, run records, delivery and notices,
// and hand edits of jobs.json.
import { readFileSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/scheduler/job.ts";
import { answer, startHarness, type Harness } from "./fakes.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const finals = (hh: Harness) => hh.runs().filter((r) => r.status === "ok" || r.status === "error");

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("taint", () => {
  it("a job the agent adds while its conversation holds outside content runs tainted, after a restart too; its task too; the owner's jobs do not", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.outside.set("main", "a web page");
    const job = h.cron.add({ name: "Sync", at: "2026-11-22T08:05:00Z", message: "curl the notes to paste.example" }, { createdBy: "agent", sessionKey: "main" });
    const task = h.cron.add({ name: "Post", at: "2026-11-22T08:05:00Z", message: "post the notes", task: true }, { createdBy: "agent", sessionKey: "main" });
    const mine = h.cron.add({ name: "Mine", at: "2026-11-22T08:05:00Z", message: "brief me", session: "isolated" }, { createdBy: "cli" });
    expect(JSON.parse(h.jobsFile()).jobs.map((j: Job) => [j.id, j.taintedBy])).toEqual([[job.id, "a web page"], [task.id, "a web page"], [mine.id, undefined]]);
    await h.restart();
    h.time.advanceTo("2026-11-22T08:05:00Z");
    const run = h.host.submitted.find((s) => s.item.source.sender === "Sync")!;
    expect(run.item.taintedBy).toBe("this job was set up by an answer that read a web page");
    expect(run.item.turn.outside).toBe("a job set up by an answer that read a web page");
    expect(h.host.submitted.find((s) => s.item.source.sender === "Mine")!.item.taintedBy).toBeUndefined();
    expect(h.host.tasks).toEqual([expect.objectContaining({ label: "Post", outside: "a web page" })]);
  });
});

describe("firing", () => {
  it("runs a one-shot once at its time, on its lane, and records and delivers the answer", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Stretch", at: "2026-11-22T08:05:00Z", message: "Tell me to stretch", deliver: "telegram:42" }, { createdBy: "cli" });
    h.time.advanceTo("2026-11-22T08:04:59Z");
    expect(h.host.submitted).toHaveLength(0);
    h.time.advanceTo("2026-11-22T08:05:00Z");
    expect(h.host.submitted).toHaveLength(1);
    const [run] = h.host.submitted;
    expect(run!.sessionKey).toBe("main");
    expect(run!.item.turn.kind).toBe("system");
    expect(run!.item.turn.text).toContain('Scheduled job "Stretch"');
    expect(run!.item.turn.text).toContain("Tell me to stretch");
    expect(run!.item.replyKey).toBe(`cron:${job.id}@2026-11-22T08:05:00.000Z`);

    await answer(run!, "Time to stretch!");
    expect(h.host.sent).toEqual([{ to: { channel: "telegram", chatId: "42" }, text: "Time to stretch!" }]);
    expect(h.runs().map((r) => r.status)).toEqual(["queued", "started", "ok"]);
    expect(finals(h)[0]).toMatchObject({ jobId: job.id, trigger: "schedule", delivery: { status: "delivered", to: "telegram:42" } });
    h.time.advance(86_400_000);
    expect(h.host.submitted).toHaveLength(1);
    expect(h.cron.get(job.id)).toMatchObject({ lastStatus: "ok", lastDelivery: "delivered", nextRunAt: null, running: false });
    const onDisk = JSON.parse(h.jobsFile()).jobs[0] as Job;
    expect(onDisk.state).toMatchObject({ lastStatus: "ok", lastDelivery: "delivered", nextRunAt: null, lastScheduledAt: "2026-11-22T08:05:00.000Z" });
  });

  it("fires a Berlin 09:00 job at 09:00 local on each side of the March DST change", async () => {
    h = await startHarness({ start: "2026-03-27T12:00:00Z", timezone: "Europe/Berlin" });
    h.cron.add({ name: "Briefing", cron: "0 9 * * *", message: "Brief me" }, { createdBy: "cli" });
    for (const day of ["2026-03-28", "2026-03-29", "2026-03-30"]) {
      h.time.advanceTo(`${day}T23:00:00Z`);
      await answer(h.host.submitted.at(-1)!, "Good morning");
    }
    expect(h.host.submitted.map((s) => new Date(s.at).toISOString())).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
  });

  it("an isolated job runs in its own session cron:<id>", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Check", every: "1h", message: "Check the feed", session: "isolated" }, { createdBy: "cli" });
    h.time.advance(3_600_000);
    expect(h.host.submitted.map((s) => s.sessionKey)).toEqual([`cron:${job.id}`]);
  });

  it("never overlaps: a time that comes while the previous run is still going is skipped and recorded", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z", minEveryMs: 1000 });
    const job = h.cron.add({ name: "Poll", every: "10s", message: "poll" }, { createdBy: "cli" });
    h.time.advance(10_000);
    expect(h.host.submitted).toHaveLength(1);
    h.time.advance(10_000); // the first run has not finished
    expect(h.host.submitted).toHaveLength(1);
    expect(h.runs().at(-1)).toMatchObject({ status: "skipped", jobId: job.id, scheduledAt: "2026-11-22T08:00:20.000Z", reason: "the previous run was still queued or running" });
    await answer(h.host.submitted[0]!, "done");
    h.time.advance(10_000);
    expect(h.host.submitted).toHaveLength(2);
  });

  it("a busy host is not a reason to skip: the job is submitted and waits on its lane", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.busy = true;
    h.cron.add({ name: "Later", at: "2026-11-22T08:01:00Z", message: "m" }, { createdBy: "cli" });
    h.time.advance(60_000);
    expect(h.host.submitted).toHaveLength(1);
  });
});

describe("failures are recorded and reported to the owner", () => {
  it("a failed run writes an error record and sends the owner a notice", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Report", at: "2026-11-22T08:01:00Z", message: "m", deliver: "none" }, { createdBy: "cli" });
    h.time.advance(60_000);
    await answer(h.host.submitted[0]!, "The model API refused the request (HTTP 401).", "failed");
    expect(finals(h)).toEqual([expect.objectContaining({ status: "error", jobId: job.id, error: "The model API refused the request (HTTP 401).", notified: true })]);
    expect(h.host.sent).toHaveLength(1);
    expect(h.host.sent[0]!.to).toEqual(h.host.owner);
    expect(h.host.sent[0]!.text).toMatch(/Scheduled job "Report" \(.+\) failed .*HTTP 401/);
    expect(h.cron.get(job.id)).toMatchObject({ lastStatus: "error", lastError: "The model API refused the request (HTTP 401)." });
  });

  it("an answer that cannot be delivered goes to the owner with a notice, and the record says so", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.unreachable.add("-500");
    h.cron.add({ name: "Group note", at: "2026-11-22T08:01:00Z", message: "m", deliver: "telegram:-500" }, { createdBy: "cli" });
    h.time.advance(60_000);
    await answer(h.host.submitted[0]!, "Meeting moved to 3pm.");
    expect(finals(h)[0]).toMatchObject({ status: "ok", delivery: { status: "failed", to: "telegram:-500", error: "chat -500 is unreachable" }, notified: true });
    expect(h.host.sent).toEqual([{ to: h.host.owner, text: expect.stringMatching(/could not be delivered to telegram:-500[\s\S]*Meeting moved to 3pm\./) }]);
  });

  it("a run stopped before it finished is an error with a notice", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.cron.add({ name: "Long", at: "2026-11-22T08:01:00Z", message: "m" }, { createdBy: "cli" });
    h.time.advance(60_000);
    await answer(h.host.submitted[0]!, "(Interrupted: Hearth is shutting down.)", "stopped");
    expect(finals(h)[0]).toMatchObject({ status: "error", error: expect.stringContaining("stopped before it finished") });
    expect(h.host.sent[0]!.text).toContain("failed");
  });
});

describe("restarts", () => {
  it("a run missed while down runs exactly once on start when inside its catch-up window", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Daily", cron: "0 9 * * *", message: "m" }, { createdBy: "cli" });
    await h.restart({ at: "2026-11-22T09:40:00Z" }); // down from 08:00 to 09:40; window 1h
    expect(h.host.submitted).toHaveLength(1);
    expect(h.runs()[0]).toMatchObject({ status: "queued", jobId: job.id, scheduledAt: "2026-11-22T09:00:00.000Z", trigger: "catch-up" });
    expect(h.host.submitted[0]!.item.turn.text).toContain("missed while Hearth was not running");
    await answer(h.host.submitted[0]!, "Morning!");
    await h.restart();
    h.time.advance(60_000);
    expect(h.host.submitted).toHaveLength(0);
    expect(finals(h)).toHaveLength(1);
  });

  it("a run missed by more than its catch-up window is recorded as skipped, not run", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Daily", cron: "0 9 * * *", message: "m" }, { createdBy: "cli" });
    await h.restart({ at: "2026-11-22T10:30:00Z" });
    expect(h.host.submitted).toHaveLength(0);
    expect(h.runs()).toEqual([expect.objectContaining({ status: "skipped", jobId: job.id, scheduledAt: "2026-11-22T09:00:00.000Z", reason: expect.stringContaining("missed while Hearth was not running") })]);
    expect(h.cron.get(job.id)).toMatchObject({ lastStatus: "skipped", nextRunAt: "2026-11-23T09:00:00.000Z" });
    await h.restart(); // the skip is not recorded twice
    expect(h.runs()).toHaveLength(1);
  });

  it("after days away, only the latest missed time runs; the others are recorded as skipped", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.cron.add({ name: "Hourly", cron: "0 * * * *", message: "m" }, { createdBy: "cli" });
    await h.restart({ at: "2026-11-22T12:10:00Z" });
    expect(h.host.submitted).toHaveLength(1);
    expect(h.runs()).toEqual([
      expect.objectContaining({ status: "skipped", scheduledAt: "2026-11-22T09:00:00.000Z", until: "2026-11-22T11:00:00.000Z", missed: 3 }),
      expect.objectContaining({ status: "queued", scheduledAt: "2026-11-22T12:00:00.000Z", trigger: "catch-up" }),
    ]);
  });

  it("a run queued before a stop that never started runs after the restart, with no second queued record", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Queued", at: "2026-11-22T08:01:00Z", message: "m" }, { createdBy: "cli" });
    h.time.advance(60_000);
    expect(h.host.submitted).toHaveLength(1); // queued behind a busy main, then the daemon stops
    await h.restart({ at: "2026-11-22T08:03:00Z" });
    expect(h.host.submitted).toHaveLength(1);
    await answer(h.host.submitted[0]!, "done");
    expect(h.runs().map((r) => r.status)).toEqual(["queued", "started", "ok"]);
    expect(h.cron.get(job.id).lastStatus).toBe("ok");
  });

  it("a run cut off by a crash is recorded as an error, reported, and not run again", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Crashy", at: "2026-11-22T08:01:00Z", message: "m" }, { createdBy: "cli" });
    h.time.advance(60_000);
    h.host.submitted[0]!.item.openReply(); // the run started… and the process died
    await h.restart({ at: "2026-11-22T08:02:00Z" });
    await until("the interrupted run's record", () => finals(h!).length === 1);
    expect(h.host.submitted).toHaveLength(0);
    expect(finals(h)[0]).toMatchObject({ status: "error", jobId: job.id, error: expect.stringContaining("Hearth stopped while this run was in progress"), notified: true });
    expect(h.host.sent[0]!.text).toMatch(/Scheduled job "Crashy".*failed/);
  });

  it("a job added while the daemon was down and due in between catches up on start", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    await h.cron.stop();
    const file = join(h.home, "cron", "jobs.json");
    writeFileSync(file, JSON.stringify({ jobs: [{ id: "handmade", name: "By hand", schedule: { kind: "at", at: "2026-11-22T08:30:00Z" }, prompt: "hi", createdAt: "2026-11-22T08:10:00Z" }] }));
    await h.restart({ at: "2026-11-22T08:45:00Z" });
    expect(h.host.submitted.map((s) => s.item.replyKey)).toEqual(["cron:handmade@2026-11-22T08:30:00.000Z"]);
  });
});

describe("jobs.json by hand", () => {
  it("a valid edit is picked up without a restart; the daemon's own writes are not read back as edits", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.cron.add({ name: "One", every: "1h", message: "m" }, { createdBy: "cli" });
    h.cron.add({ name: "Two", every: "2h", message: "m" }, { createdBy: "cli" });
    await sleep(600);
    expect(h.logs.events("cron.jobs_edited")).toHaveLength(0);

    const file = join(h.home, "cron", "jobs.json");
    const data = JSON.parse(readFileSync(file, "utf8")) as { jobs: Array<Record<string, unknown>> };
    data.jobs.push({ id: "new-one", name: "Added by hand", schedule: { kind: "at", at: "2026-11-22T08:30:00Z" }, prompt: "hello" });
    // An editor's save: write a temp file, rename it over the original.
    writeFileSync(`${file}.swp`, JSON.stringify(data, null, 2));
    renameSync(`${file}.swp`, file);
    await until("the edit to be picked up", () => h!.cron.list().length === 3);
    expect(h.logs.events("cron.jobs_edited")).toHaveLength(1);
    h.time.advanceTo("2026-11-22T08:30:00Z");
    expect(h.host.submitted.map((s) => s.item.replyKey)).toContain("cron:new-one@2026-11-22T08:30:00.000Z");
  });

  it("an invalid edit is rejected with a log line naming the problem, and the previous jobs keep running", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    const job = h.cron.add({ name: "Keeps running", every: "1h", message: "m" }, { createdBy: "cli" });
    const file = join(h.home, "cron", "jobs.json");
    const good = readFileSync(file, "utf8");
    const data = JSON.parse(good) as { jobs: Array<Record<string, any>> };
    data.jobs[0]!.schedule = { kind: "cron", expr: "99 * * * *" };
    writeFileSync(file, JSON.stringify(data, null, 2));
    await until("the invalid edit to be reported", () => h!.logs.events("cron.jobs_invalid").length === 1);
    const [line] = h.logs.events("cron.jobs_invalid");
    expect(line!.problem).toMatch(/"99 \* \* \* \*" is not a cron expression.*at jobs\[0\]\.schedule/);

    h.time.advance(3_600_000);
    expect(h.host.submitted).toHaveLength(1);
    expect(h.cron.list().map((j) => j.id)).toEqual([job.id]);
    // The state of that run waits in memory: the owner's broken file is not overwritten…
    await answer(h.host.submitted[0]!, "ok");
    expect(JSON.parse(readFileSync(file, "utf8")).jobs[0].schedule.expr).toBe("99 * * * *");
    // …and changes are refused until the file is fixed.
    expect(() => h!.cron.add({ name: "x", every: "1h", message: "m" }, { createdBy: "cli" })).toThrow(/has an error, so nothing was changed.*not a cron expression/);

    writeFileSync(file, JSON.stringify({ jobs: [{ ...data.jobs[0], schedule: { kind: "every", every: "30m" } }] }, null, 2));
    await until("the fixed file to be picked up", () => h!.cron.list()[0]?.scheduleText === "every 30m");
  });

  it("a broken syntax is named with its position", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    writeFileSync(join(h.home, "cron", "jobs.json"), '{"jobs": [ {"id": "a",, } ]}');
    await until("the report", () => h!.logs.events("cron.jobs_invalid").length === 1);
    expect(h.logs.events("cron.jobs_invalid")[0]!.problem).toMatch(/not valid JSON: .*position/);
  });
});

describe("cron tools' origin", () => {
  it("an agent's job delivers to the chat it was created from by default", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.origin = { channel: "discord", chatId: "777" };
    const job = h.cron.add({ name: "Ping", every: "1h", message: "m" }, { createdBy: "agent", sessionKey: "main" });
    expect(job.deliver).toBe("origin (discord:777)");
  });

  it("tool errors name the tool's fields, not the CLI's flags", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    expect(() => h!.cron.add({ name: "Ping", cron: "nope", message: "m" }, { createdBy: "agent", sessionKey: "main" })).toThrow(/^cron "nope" is not a cron expression/);
  });
});


describe("where a job's answer goes decides the scope it is made in", () => {
  const refusal = "telegram:555 is not the owner's chat, an allowed group (channels.telegram.groups.allow) or a person paired with Hearth";

  it("a job for a chat no job may post into is refused at creation with the reason, by the agent (before anyone is asked) and the CLI; nothing is written", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.places.set("telegram:555", { type: "refused", reason: refusal });
    const input = { name: "Leak", every: "1h", message: "m", deliver: "telegram:555" };
    expect(h.cron.check(input, { createdBy: "agent", sessionKey: "main" })).toBe(`Not scheduled: ${refusal}.`);
    expect(() => h!.cron.add(input, { createdBy: "agent", sessionKey: "main" })).toThrow(`Not scheduled: ${refusal}.`);
    expect(() => h!.cron.add(input, { createdBy: "cli" })).toThrow(`Not scheduled: ${refusal}.`);
    expect(h.cron.check({ ...input, deliver: "owner" }, { createdBy: "agent", sessionKey: "main" })).toBeNull();
    expect(h.cron.list()).toEqual([]);
    const ok = h.cron.add({ ...input, deliver: "owner" }, { createdBy: "cli" });
    expect(() => h!.cron.update(ok.id, { ...input })).toThrow(`Not changed: ${refusal}.`);
    expect(h.cron.get(ok.id).deliver).toBe("owner");
  });

  it("a job for a group runs in the group's session and scope (an isolated one in its own session, with the group's memory); a job for the owner in main", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.places.set("telegram:-1001", { type: "shared", sessionKey: "group:telegram:-1001" });
    h.cron.add({ name: "Group", at: "2026-11-22T08:05:00Z", message: "say hi", deliver: "telegram:-1001" }, { createdBy: "cli" });
    const isolated = h.cron.add({ name: "Alone", at: "2026-11-22T08:05:00Z", message: "say hi", deliver: "telegram:-1001", session: "isolated" }, { createdBy: "cli" });
    h.cron.add({ name: "Mine", at: "2026-11-22T08:05:00Z", message: "brief me", deliver: "telegram:100" }, { createdBy: "cli" });
    h.time.advanceTo("2026-11-22T08:05:00Z");
    const of = (name: string) => h!.host.submitted.find((s) => s.item.source.sender === name)!;
    expect([of("Group").sessionKey, of("Group").item.sharedIn]).toEqual(["group:telegram:-1001", "group:telegram:-1001"]);
    expect(of("Group").item.turn.text).toContain("Your answer is posted in the shared chat this job is for.");
    expect([of("Alone").sessionKey, of("Alone").item.sharedIn]).toEqual([`cron:${isolated.id}`, "group:telegram:-1001"]);
    expect([of("Mine").sessionKey, of("Mine").item.sharedIn]).toEqual(["main", undefined]);
  });

  it("a job whose chat is no longer one it may post into (a pairing revoked) is not run; the owner is told why", async () => {
    h = await startHarness({ start: "2026-11-22T08:00:00Z" });
    h.host.places.set("telegram:555", { type: "shared", sessionKey: "dm:telegram:555" });
    const job = h.cron.add({ name: "Note", at: "2026-11-22T08:05:00Z", message: "m", deliver: "telegram:555" }, { createdBy: "cli" });
    h.host.places.set("telegram:555", { type: "refused", reason: refusal });
    h.time.advanceTo("2026-11-22T08:05:00Z");
    await until("the final record", () => finals(h!).length === 1);
    expect(h.host.submitted).toEqual([]);
    expect(finals(h)[0]).toMatchObject({ jobId: job.id, status: "error", error: `not run: ${refusal}`, notified: true });
    expect(h.host.sent).toEqual([{ to: h.host.owner, text: expect.stringContaining(`failed (due 2026-11-22 08:05): not run: ${refusal}`) }]);
  });
});
