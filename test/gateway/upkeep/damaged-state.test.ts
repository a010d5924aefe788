// Each store through the validating loader: a damaged state file costs what is damaged, never
// the daemon, is never overwritten, and is listed for the owner until they deal with it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptyUsage } from "../../../src/agent/messages.ts";
import { listDamaged } from "../../../src/gateway/upkeep/damaged-state.ts";
import { homePaths } from "../../../src/config/home.ts";
import { PairingStore } from "../../../src/gateway/access/pairing.ts";
import { JobStore } from "../../../src/scheduler/job-store.ts";
import { RunLog } from "../../../src/scheduler/run-log.ts";
import { SessionStore } from "../../../src/gateway/sessions.ts";
import { createLogger, silentLogger } from "../../../src/process/log.ts";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-damaged-"));
  mkdirSync(join(home, "sessions"));
  mkdirSync(join(home, "cron"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const paths = () => homePaths(home);
const NOW = Date.parse("2026-11-23T10:41:07.123Z");
const STAMP = "2026-11-23T10-41-07-123Z";
const clock = () => NOW;

function capture() {
  const lines: string[] = [];
  return {
    log: createLogger({ level: "warn", sink: { write: (l) => lines.push(l) } }),
    events: () => lines.map((l) => JSON.parse(l) as { event: string; file: string; keptAs?: string; dropped?: string[]; lines?: number[] }),
  };
}

const session = (key: string) => ({ key, scope: "main", createdAt: 1, lastActivityAt: 2, contextTokens: 3 });

describe("sessions/index.json", () => {
  it('"sessions":"oops" keeps the rest, starts with no sessions, and keeps the original', () => {
    const text = JSON.stringify({ version: 1, sessions: "oops", today: { date: "2026-11-23", usage: emptyUsage(), costUsd: 0.5, runs: 4 } });
    writeFileSync(paths().sessionsIndex, text);
    const { log, events } = capture();
    const store = SessionStore.open(paths().sessionsIndex, log, "UTC", clock);
    expect(store.all()).toEqual([]);
    expect(store.today().runs).toBe(4);
    // It works: a message's session is recorded and saved.
    store.touch("main", "main");
    store.flush();
    expect(JSON.parse(readFileSync(paths().sessionsIndex, "utf8")).sessions.main.key).toBe("main");
    expect(readFileSync(`${paths().sessionsIndex}.damaged-${STAMP}`, "utf8")).toBe(text);
    expect(events().map((e) => [e.event, e.file, e.dropped])).toEqual([["state.records_dropped", paths().sessionsIndex, ["sessions: not an object"]]]);
    expect(listDamaged(home)).toEqual([{ file: "sessions/index.json", copy: `sessions/index.json.damaged-${STAMP}` }]);
  });

  it('"today":null gives a fresh day and keeps every session; a bad session record is dropped by name', () => {
    const text = JSON.stringify({ version: 1, sessions: { main: session("main"), "dm:telegram:7": { key: 5 } }, today: null });
    writeFileSync(paths().sessionsIndex, text);
    const { log, events } = capture();
    const store = SessionStore.open(paths().sessionsIndex, log, "UTC", clock);
    expect(store.all().map((s) => s.key)).toEqual(["main"]);
    expect(store.today()).toEqual({ date: "2026-11-23", usage: emptyUsage(), costUsd: 0, runs: 0 });
    store.countRun(); // threw "Cannot read properties of null" before
    store.recordUsage("main", "claude-sonnet-5-5", { ...emptyUsage(), inputTokens: 10 }, 10);
    expect(store.today().runs).toBe(1);
    const dropped = events()[0]!.dropped!;
    expect(dropped.map((d) => d.split(":")[0])).toEqual(['sessions["dm', "today"]);
    expect(readFileSync(`${paths().sessionsIndex}.damaged-${STAMP}`, "utf8")).toBe(text);
  });

  it("an index that is not JSON is moved aside and Hearth starts a fresh one", () => {
    writeFileSync(paths().sessionsIndex, '{"version":1,"sess');
    const store = SessionStore.open(paths().sessionsIndex, silentLogger, "UTC", clock);
    expect(store.all()).toEqual([]);
    expect(existsSync(paths().sessionsIndex)).toBe(false);
    expect(readFileSync(`${paths().sessionsIndex}.damaged-${STAMP}`, "utf8")).toBe('{"version":1,"sess');
  });

  it("a valid index is read as it is and nothing is set aside", () => {
    writeFileSync(paths().sessionsIndex, JSON.stringify({ version: 1, sessions: { main: session("main") }, today: { date: "2026-11-23", usage: emptyUsage(), costUsd: 0, runs: 2 } }));
    const store = SessionStore.open(paths().sessionsIndex, silentLogger, "UTC", clock);
    expect(store.get("main")).toEqual(session("main"));
    expect(listDamaged(home)).toEqual([]);
  });
});

describe("pairing.json", () => {
  const approved = { channel: "telegram", userId: "42", name: "Ann", approvedAt: 1 };

  it("a garbled file is kept as a copy and never overwritten with an empty list", () => {
    const text = `{"pending":[],"approved":[${JSON.stringify(approved)},{"chan`;
    writeFileSync(paths().pairing, text);
    const { log, events } = capture();
    const store = PairingStore.open(paths().pairing, log, clock);
    expect(store.isApproved("telegram", "42")).toBe(false);
    store.request("telegram", "99", "Bob"); // a save: writes a new pairing.json
    expect(readFileSync(`${paths().pairing}.damaged-${STAMP}`, "utf8")).toBe(text);
    expect(events().map((e) => [e.event, e.file, e.keptAs])).toEqual([["state.file_damaged", paths().pairing, `${paths().pairing}.damaged-${STAMP}`]]);
    expect(listDamaged(home)).toEqual([{ file: "pairing.json", copy: `pairing.json.damaged-${STAMP}` }]);
  });

  it("a wrong-shaped approved entry costs only that entry", () => {
    writeFileSync(paths().pairing, JSON.stringify({ pending: [], approved: [approved, null, { channel: "telegram", userId: 7 }] }));
    const { log, events } = capture();
    const store = PairingStore.open(paths().pairing, log, clock);
    expect(store.isApproved("telegram", "42")).toBe(true);
    expect(events()[0]!.dropped!.map((d) => d.split(":")[0])).toEqual(["approved[1]", "approved[2]"]);
  });
});

describe("cron/jobs.json at start-up", () => {
  const rules = { timezone: "UTC", minEveryMs: 60_000 };
  const job = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    name: `job ${id}`,
    schedule: { kind: "every", every: "1h" },
    prompt: "do it",
    ...extra,
  });

  it("a truncated file is moved aside (jobs not silently lost) and the scheduler starts empty", () => {
    const text = `{"version":1,"jobs":[${JSON.stringify(job("aaaa1111"))},{"id":"bb`;
    writeFileSync(paths().jobs, text);
    const { log, events } = capture();
    const store = new JobStore(paths().jobs, rules, log);
    expect(store.load(NOW)).toEqual([]);
    expect(store.problem()).toBeNull();
    expect(readFileSync(`${paths().jobs}.damaged-${STAMP}`, "utf8")).toBe(text);
    expect(events().map((e) => [e.event, e.file])).toEqual([["state.file_damaged", paths().jobs]]);
    expect(listDamaged(home)).toEqual([{ file: "cron/jobs.json", copy: `cron/jobs.json.damaged-${STAMP}` }]);
  });

  it("an invalid job is dropped by name, the valid ones kept and written back, the original kept", () => {
    const text = JSON.stringify({ version: 1, jobs: [job("aaaa1111"), job("bbbb2222", { schedule: { kind: "cron", expr: "not a cron" } }), null] });
    writeFileSync(paths().jobs, text);
    const { log, events } = capture();
    const store = new JobStore(paths().jobs, rules, log);
    expect(store.load(NOW).map((j) => j.id)).toEqual(["aaaa1111"]);
    expect(store.read()).toMatchObject({ ok: true, jobs: [{ id: "aaaa1111" }] });
    expect(readFileSync(`${paths().jobs}.damaged-${STAMP}`, "utf8")).toBe(text);
    expect(events()[0]!.dropped!.map((d) => d.split(":")[0])).toEqual(['jobs[1] ("job bbbb2222", id bbbb2222)', "jobs[2]"]);
  });
});

describe("cron/runs.jsonl", () => {
  it("wrong-shaped lines are skipped and logged with their numbers; the runs around them count", () => {
    const queued = { status: "queued", runId: "j@t", jobId: "j", job: "J", scheduledAt: "2026-11-23T10:00:00.000Z", trigger: "schedule", at: "2026-11-23T10:00:00.000Z" };
    writeFileSync(paths().runs, [JSON.stringify(queued), "null", '{"status":"ok"}', '{"status":"queued","jobId":"x"}'].join("\n") + "\n");
    const { log, events } = capture();
    const { recovery } = RunLog.open(paths().runs, log);
    expect(recovery.queued.map((q) => q.runId)).toEqual(["j@t"]);
    expect(events().map((e) => [e.event, e.file, e.lines])).toEqual([["state.records_skipped", paths().runs, [2, 3, 4]]]);
    expect(readdirSync(join(home, "cron"))).toEqual(["runs.jsonl"]);
  });

  it("a runs.jsonl that cannot be read at all (a folder in its place) is moved aside and the log starts empty", () => {
    mkdirSync(paths().runs);
    const { log, events } = capture();
    const { runs, recovery } = RunLog.open(paths().runs, log);
    expect(recovery.queued).toEqual([]);
    expect(events().map((e) => [e.event, e.file])).toEqual([["state.file_damaged", paths().runs]]);
    expect(listDamaged(home).map((d) => d.file)).toEqual(["cron/runs.jsonl"]);
    runs.append({ status: "started", runId: "j@t", jobId: "j", at: "2026-11-23T10:00:00.000Z" });
    expect(readFileSync(paths().runs, "utf8")).toBe('{"status":"started","runId":"j@t","jobId":"j","at":"2026-11-23T10:00:00.000Z"}\n');
  });
});
