// Schedule arithmetic and the checks on a new job: DST, intervals, one-shots, missed runs, and
// the messages a bad expression, time zone or time gets.
import { describe, expect, it } from "vitest";
import { buildJob, cliField, CronInputError, type JobInput, type NewJobContext } from "../../src/scheduler/job-input.ts";
import { checkSchedule, dueRuns, nextRunAfter, parseInstant } from "../../src/scheduler/schedule.ts";
import { zonedParts } from "../../src/process/time.ts";

const BERLIN = "Europe/Berlin";
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

function nextRuns(expr: string, from: string, n: number, tz = BERLIN): string[] {
  const out: string[] = [];
  let t = Date.parse(from);
  for (let i = 0; i < n; i++) {
    t = nextRunAfter({ kind: "cron", expr, tz }, t, 0, "UTC")!;
    out.push(iso(t)!);
  }
  return out;
}

describe("nextRunAfter", () => {
  it("0 9 * * * in Europe/Berlin stays at 09:00 local across the March DST change", () => {
    // Clocks go forward on 2026-03-29 at 02:00 local: 09:00 is 08:00Z before, 07:00Z after.
    const runs = nextRuns("0 9 * * *", "2026-03-27T12:00:00Z", 4);
    expect(runs).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z", "2026-03-31T07:00:00.000Z"]);
    for (const r of runs) expect(zonedParts(Date.parse(r), BERLIN)).toMatchObject({ hour: "09", minute: "00" });
  });

  it("0 9 * * * in Europe/Berlin stays at 09:00 local across the October DST change", () => {
    // Clocks go back on 2026-10-25 at 03:00 local: 09:00 is 07:00Z before, 08:00Z after.
    const runs = nextRuns("0 9 * * *", "2026-10-23T12:00:00Z", 4);
    expect(runs).toEqual(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z", "2026-10-27T08:00:00.000Z"]);
    for (const r of runs) expect(zonedParts(Date.parse(r), BERLIN)).toMatchObject({ hour: "09", minute: "00" });
  });

  it("a time in the spring-forward gap runs once that day, and a repeated hour runs once", () => {
    expect(nextRuns("30 2 * * *", "2026-03-28T00:00:00Z", 3)).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
    expect(nextRuns("30 2 * * *", "2026-10-24T00:00:00Z", 3)).toEqual(["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  it("an interval counts from the job's creation, so a restart does not shift it", () => {
    const anchor = Date.parse("2026-01-01T10:07:00Z");
    const every = { kind: "every", every: "30m" } as const;
    expect(iso(nextRunAfter(every, anchor, anchor, "UTC"))).toBe("2026-01-01T10:37:00.000Z");
    expect(iso(nextRunAfter(every, Date.parse("2026-01-01T12:00:00Z"), anchor, "UTC"))).toBe("2026-01-01T12:07:00.000Z");
    expect(iso(nextRunAfter(every, Date.parse("2026-01-01T12:07:00Z"), anchor, "UTC"))).toBe("2026-01-01T12:37:00.000Z");
  });

  it("a one-shot has one run and none after it", () => {
    const at = { kind: "at", at: "2026-05-01T08:00:00Z" } as const;
    expect(iso(nextRunAfter(at, Date.parse("2026-04-01T00:00:00Z"), 0, "UTC"))).toBe("2026-05-01T08:00:00.000Z");
    expect(nextRunAfter(at, Date.parse("2026-05-01T08:00:00Z"), 0, "UTC")).toBeNull();
  });
});

describe("dueRuns", () => {
  it("finds how many times a job was due in a window, and the latest", () => {
    const daily = { kind: "cron", expr: "0 9 * * *", tz: BERLIN } as const;
    const due = dueRuns(daily, Date.parse("2026-03-27T12:00:00Z"), Date.parse("2026-03-30T12:00:00Z"), 0, "UTC");
    expect(due).toEqual({
      first: Date.parse("2026-03-28T08:00:00Z"),
      latest: Date.parse("2026-03-30T07:00:00Z"),
      beforeLatest: Date.parse("2026-03-29T07:00:00Z"),
      count: 3,
    });
    expect(dueRuns(daily, Date.parse("2026-03-30T07:00:00Z"), Date.parse("2026-03-30T12:00:00Z"), 0, "UTC")).toBeNull();
  });

  it("finds the latest run of a per-minute job after a week away without walking every minute", () => {
    const due = dueRuns({ kind: "cron", expr: "* * * * *", tz: "UTC" }, Date.parse("2026-01-01T00:00:30Z"), Date.parse("2026-01-08T00:00:30Z"), 0, "UTC")!;
    expect(iso(due.latest)).toBe("2026-01-08T00:00:00.000Z");
    expect(iso(due.beforeLatest)).toBe("2026-01-07T23:59:00.000Z");
    expect(due.count).toBe(1000);
  });
});

describe("checks on a new job", () => {
  const now = Date.parse("2026-11-22T08:00:00Z");
  const ctx: NewJobContext = {
    now,
    timezone: BERLIN,
    minEveryMs: 10_000,
    createdBy: "cli",
    origin: null,
    field: cliField,
    defaultDelivery: "owner",
    takenIds: new Set(),
  };
  const refused = (input: JobInput): string => {
    try {
      buildJob({ name: "N", message: "M", ...input }, ctx);
    } catch (err) {
      expect(err).toBeInstanceOf(CronInputError);
      return (err as Error).message;
    }
    throw new Error("the input was accepted");
  };

  it("refuses a bad expression, saying what is accepted", () => {
    expect(refused({ cron: "61 * * * *" })).toMatch(/--cron "61 \* \* \* \*" is not a cron expression .*minute.*: use 5 fields .*e\.g\. "0 9 \* \* 1-5"/);
    expect(refused({ cron: "* * * *" })).toMatch(/is not a cron expression .*use 5 fields/);
    expect(refused({ cron: "0 0 31 2 *" })).toMatch(/never matches a date/);
  });

  it("refuses a bad time zone, naming valid ones", () => {
    expect(refused({ cron: "0 9 * * *", tz: "Mars/Olympus" })).toMatch(/--tz "Mars\/Olympus" is not a time zone: use an IANA time zone such as "Europe\/Berlin"/);
    expect(refused({ every: "1h", tz: "UTC" })).toMatch(/--tz only applies to --cron/);
  });

  it("refuses a past or unreadable --at, and an interval that is too short or not one", () => {
    expect(refused({ at: "2026-11-22T07:59:00Z" })).toMatch(/--at 2026-11-22T07:59:00.000Z is in the past .*give a time in the future/);
    expect(refused({ at: "tomorrow 9am" })).toMatch(/--at "tomorrow 9am" is not a time: use an ISO time such as/);
    expect(refused({ every: "5s" })).toMatch(/--every "5s" is too short: the shortest interval is 10s/);
    expect(refused({ every: "often" })).toMatch(/is not an interval/);
    expect(refused({})).toMatch(/A schedule is required: --cron "EXPR" .* --every DURATION .* --at TIME/);
    expect(refused({ every: "1h", at: "2027-01-01T00:00:00Z" })).toMatch(/Give only one schedule, not --every and --at/);
  });

  it("refuses a bad delivery or session, listing the accepted ones", () => {
    expect(refused({ every: "1h", deliver: "email:me" })).toMatch(/--deliver must be origin, owner, none, telegram:<chatId>, discord:<channelId>, slack:<channelId>, matrix:<roomId>, signal:<number or groupId>, whatsapp:<number or groupId> or email:<address>, not "email:me"/);
    expect(refused({ every: "1h", deliver: "discord:general" })).toMatch(/--deliver must be/);
    expect(refused({ every: "1h", session: "shared" })).toMatch(/--session must be "main" .* or "isolated"/);
  });

  it("reads a local --at in the configured time zone, and stores a cron job's zone", () => {
    const job = buildJob({ name: "N", message: "M", at: "2026-11-23T09:00" }, ctx);
    expect(job.schedule).toEqual({ kind: "at", at: "2026-11-23T08:00:00.000Z" });
    expect(buildJob({ name: "N", message: "M", cron: "0  9 * * *" }, ctx).schedule).toEqual({ kind: "cron", expr: "0 9 * * *", tz: BERLIN });
    expect(buildJob({ name: "N", message: "M", every: "2h", deliver: "telegram:-100123" }, ctx).delivery).toEqual({ to: "chat", channel: "telegram", chatId: "-100123" });
  });

  it("parseInstant handles offsets, Z and local times on both sides of a DST change", () => {
    expect(iso(parseInstant("2026-03-29T09:00", BERLIN))).toBe("2026-03-29T07:00:00.000Z");
    expect(iso(parseInstant("2026-03-28T09:00", BERLIN))).toBe("2026-03-28T08:00:00.000Z");
    expect(iso(parseInstant("2026-03-28T09:00:00+05:30", BERLIN))).toBe("2026-03-28T03:30:00.000Z");
    expect(parseInstant("2026-13-01T09:00", BERLIN)).toBeNull();
    expect(parseInstant("1700000000", BERLIN)).toBeNull();
  });

  it("checkSchedule accepts what buildJob writes", () => {
    expect(checkSchedule({ kind: "cron", expr: "*/5 * * * * *", tz: "UTC" }, ctx)).toBeNull();
    expect(checkSchedule({ kind: "every", every: "10s" }, ctx)).toBeNull();
  });
});
