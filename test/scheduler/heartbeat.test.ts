// The heartbeat with fake time and a fake gateway: when it runs, when it does not, and which
// answers reach the owner.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checklistOf, Heartbeat, isHeartbeatOk, withinActiveHours } from "../../src/scheduler/heartbeat.ts";
import { silentLogger } from "../../src/process/log.ts";
import { answer, FakeHost, FakeTime, startHarness, type Harness } from "./fakes.ts";

describe("HEARTBEAT_OK detection", () => {
  it.each([
    "HEARTBEAT_OK",
    "**HEARTBEAT_OK**",
    "`HEARTBEAT_OK`",
    "heartbeat_ok.",
    "HEARTBEAT_OK — nothing to report.",
    "All quiet. HEARTBEAT_OK",
    "",
  ])("%j is only a heartbeat acknowledgement", (text) => expect(isHeartbeatOk(text)).toBe(true));

  it.each([
    "Your dentist appointment is in 2 hours.",
    "Reminder: call the bank today before it closes. HEARTBEAT_OK",
    "HEARTBEAT",
    "OK",
  ])("%j is a message for the owner", (text) => expect(isHeartbeatOk(text)).toBe(false));
});

describe("active hours", () => {
  const at = (hhmm: string) => Date.parse(`2026-11-22T${hhmm}:00Z`);
  it("are a half-open range in the owner's time zone, may span midnight, and start == end means all day", () => {
    const day = { start: "08:00", end: "22:00" };
    expect(withinActiveHours(at("08:00"), day, "UTC")).toBe(true);
    expect(withinActiveHours(at("21:59"), day, "UTC")).toBe(true);
    expect(withinActiveHours(at("22:00"), day, "UTC")).toBe(false);
    expect(withinActiveHours(at("07:30"), day, "Europe/Berlin")).toBe(true); // 08:30 in Berlin
    const night = { start: "22:00", end: "06:00" };
    expect(withinActiveHours(at("23:00"), night, "UTC")).toBe(true);
    expect(withinActiveHours(at("05:59"), night, "UTC")).toBe(true);
    expect(withinActiveHours(at("12:00"), night, "UTC")).toBe(false);
    expect(withinActiveHours(at("03:00"), { start: "00:00", end: "00:00" }, "UTC")).toBe(true);
    expect(withinActiveHours(at("23:59"), { start: "08:00", end: "24:00" }, "UTC")).toBe(true);
  });
});

describe("checklist", () => {
  it("drops comments; a file with only headings or nothing is no checklist", () => {
    expect(checklistOf("<!-- a note -->\n# Heartbeat\n\n- check mail")).toBe("# Heartbeat\n\n- check mail");
    expect(checklistOf("<!-- a note -->\n# Heartbeat\n")).toBeNull();
    expect(checklistOf(null)).toBeNull();
  });
});

describe("Heartbeat", () => {
  let checklist: string | null = "- Is anything due soon?";
  const make = (start = "2026-11-22T12:00:00Z", hours = { start: "08:00", end: "22:00" }) => {
    const time = new FakeTime(start);
    const host = new FakeHost(time);
    const hb = new Heartbeat({ host, clock: time.clock, timers: time, log: silentLogger, everyMs: 30 * 60_000, activeHours: hours, timezone: "UTC", pauseAfterIdleMs: 7 * 86_400_000, readChecklist: () => checklist });
    hb.start();
    return { time, host, hb };
  };

  it("runs on main's lane every interval as a heartbeat run whose turn holds only the time", () => {
    const { time, host } = make();
    time.advance(29 * 60_000);
    expect(host.submitted).toHaveLength(0);
    time.advance(60_000);
    expect(host.submitted).toHaveLength(1);
    expect(host.submitted[0]!.sessionKey).toBe("main");
    expect(host.submitted[0]!.item.purpose).toBe("heartbeat");
    expect(host.submitted[0]!.item.turn.text).toBe("[2026-11-22 12:30 (Sun), UTC · heartbeat · Hearth]\nHeartbeat check-in: go through the checklist now.");
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(2);
  });

  it("delivers nothing for HEARTBEAT_OK and anything else to the owner's last chat", async () => {
    const { time, host } = make();
    time.advance(30 * 60_000);
    await answer(host.submitted[0]!, "HEARTBEAT_OK");
    expect(host.sent).toEqual([]);
    time.advance(30 * 60_000);
    await answer(host.submitted[1]!, "Your train leaves in 40 minutes.");
    expect(host.sent).toEqual([{ to: host.owner, text: "Your train leaves in 40 minutes." }]);
    expect(host.senders).toEqual(["heartbeat"]);
    expect(host.inMain).toEqual(["Your train leaves in 40 minutes."]);
  });

  it("adds nothing to main when the message could not be delivered", async () => {
    const { time, host } = make();
    host.unreachable.add(host.owner.chatId);
    time.advance(30 * 60_000);
    await answer(host.submitted[0]!, "Your train leaves in 40 minutes.");
    expect(host.sent).toEqual([]);
    expect(host.inMain).toEqual([]);
  });

  it("pauses after pauseAfterIdle without a message from the owner and resumes with the next one", async () => {
    const { time, host, hb } = make("2026-11-22T12:00:00Z", { start: "00:00", end: "00:00" });
    host.ownerAt = Date.parse("2026-11-22T11:00:00Z");
    time.advanceTo("2026-11-29T10:59:00Z");
    const before = host.submitted.length;
    expect(before).toBe(7 * 48 - 3); // every 30 minutes from 12:30 on the 22nd to 10:30 on the 29th
    time.advanceTo("2026-11-30T12:00:00Z"); // seven days after the owner's last message: paused
    expect(host.submitted).toHaveLength(before);
    expect(hb.beat()).toBe("paused");
    host.ownerAt = time.now; // the owner writes
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(before + 1);
  });

  it("skips without a model call when the checklist is timeless and no file changed since the last HEARTBEAT_OK", async () => {
    checklist = "- Is the backup folder mentioned in MEMORY.md still listed?";
    const { time, host, hb } = make();
    host.changedAt = Date.parse("2026-11-22T11:00:00Z");
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(1); // no HEARTBEAT_OK yet: it runs
    await answer(host.submitted[0]!, "HEARTBEAT_OK");
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(1);
    expect(hb.beat()).toBe("unchanged");
    host.changedAt = time.now; // a workspace file changed
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(2);
    checklist = "- Is anything due soon?";
  });

  it("never skips a time-dependent checklist, nor without a watcher", async () => {
    const { time, host } = make(); // "- Is anything due soon?"
    host.changedAt = Date.parse("2026-11-22T11:00:00Z");
    time.advance(30 * 60_000);
    await answer(host.submitted[0]!, "HEARTBEAT_OK");
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(2);
    checklist = "- Is the backup folder still listed?";
    host.changedAt = null;
    await answer(host.submitted[1]!, "HEARTBEAT_OK");
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(3);
    checklist = "- Is anything due soon?";
  });

  it("asks the budget before spending", () => {
    const { time, host, hb } = make();
    host.budgetAllows = false;
    time.advance(60 * 60_000);
    expect(host.submitted).toHaveLength(0);
    expect(hb.beat()).toBe("budget");
  });

  it("tryNow reports what it would send, delivers nothing and says why a scheduled tick would not run", async () => {
    const { host, hb } = make("2026-11-22T23:00:00Z");
    const report = hb.tryNow();
    expect(host.submitted).toHaveLength(1);
    expect(host.submitted[0]!.item.worthLogging!("Your train leaves soon.")).toBe(false);
    await answer(host.submitted[0]!, "Your train leaves soon.");
    expect(await report).toEqual({ kind: "message", text: "Your train leaves soon.", to: "telegram:100", scheduled: "it is outside heartbeat.activeHours (08:00–22:00)" });
    expect(host.sent).toEqual([]);
    expect(host.inMain).toEqual([]);
  });

  it("does not deliver a failed heartbeat run", async () => {
    const { time, host } = make();
    time.advance(30 * 60_000);
    await answer(host.submitted[0]!, "The model API is overloaded.", "failed");
    expect(host.sent).toEqual([]);
  });

  it("is skipped, not queued, while main is busy", () => {
    const { time, host, hb } = make();
    host.busy = true;
    time.advance(30 * 60_000);
    expect(host.submitted).toHaveLength(0);
    host.busy = false;
    time.advance(29 * 60_000);
    expect(host.submitted).toHaveLength(0);
    expect(hb.beat()).toBe("ran");
  });

  it("does not run outside active hours", () => {
    const { time, host } = make("2026-11-22T22:10:00Z");
    time.advance(9 * 3_600_000); // 22:10 → 07:10, eighteen heartbeat times
    expect(host.submitted).toHaveLength(0);
    time.advance(3_600_000); // 07:40 is still outside, 08:10 is inside
    expect(host.submitted.map((s) => new Date(s.at).toISOString())).toEqual(["2026-11-23T08:10:00.000Z"]);
  });

  it("does not run without a checklist", () => {
    checklist = "# Heartbeat\n";
    const { time, host } = make();
    time.advance(60 * 60_000);
    expect(host.submitted).toHaveLength(0);
    checklist = "- Is anything due soon?";
  });
});

describe("heartbeat in the scheduler", () => {
  let h: Harness | undefined;
  let workspace: string | undefined;
  afterEach(async () => {
    await h?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it("reads HEARTBEAT.md from the workspace at each beat; every: 0 turns it off", async () => {
    workspace = mkdtempSync(join(tmpdir(), "hearth-ws-"));
    writeFileSync(join(workspace, "HEARTBEAT.md"), "- first version");
    h = await startHarness({ start: "2026-11-22T12:00:00Z", workspace, heartbeat: { every: "10m", activeHours: { start: "00:00", end: "00:00" } } });
    h.time.advance(10 * 60_000);
    expect(h.host.submitted).toHaveLength(1);
    writeFileSync(join(workspace, "HEARTBEAT.md"), "# Heartbeat\n");
    h.time.advance(10 * 60_000);
    expect(h.host.submitted).toHaveLength(1);
    writeFileSync(join(workspace, "HEARTBEAT.md"), "- edited by hand");
    h.time.advance(10 * 60_000);
    expect(h.host.submitted).toHaveLength(2);
    await h.close();

    h = await startHarness({ start: "2026-11-22T12:00:00Z", workspace, heartbeat: { every: "0" } });
    h.time.advance(24 * 3_600_000);
    expect(h.host.submitted).toHaveLength(0);
  });
});
