import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage, ReplyJournal, ReplySink } from "../../src/channels/channel.ts";
import type { InboxEntry } from "../../src/gateway/inbox.ts";
import { Outbox } from "../../src/gateway/outbox.ts";
import { GIVEN_UP_TEXT, planRecovery, retryDelayMs } from "../../src/gateway/recovery.ts";
import { silentLogger, type Logger } from "../../src/process/log.ts";

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-outbox-"));
  path = join(dir, "outbox.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const msg = (id: string): InboundMessage => ({
  id,
  channel: "telegram",
  chat: { id: "1", type: "dm", members: ["1"] },
  sender: { id: "1", name: "Owner", isOwner: true },
  text: `text ${id}`,
  addressed: true,
  receivedAt: 1,
});
const entry = (id: string, attempts = 0, trials = 0): InboxEntry => ({ id: `telegram:${id}`, sessionKey: "main", message: msg(id), acceptedAt: 1, attempts, trials });

/** A sink that records calls, and what the outbox file held when finish was called. */
function recordingSink(journal: ReplyJournal) {
  const calls: string[] = [];
  let fileAtFinish = "";
  const sink: ReplySink = {
    textDelta: (t) => void calls.push(`delta:${t}`),
    textReset: () => {},
    toolStarted: () => {},
    toolFinished: () => {},
    finish: async (text, outcome) => {
      fileAtFinish = readFileSync(path, "utf8");
      calls.push(`finish:${text}:${outcome}`);
    },
    fail: async (m) => void calls.push(`fail:${m}`),
  };
  return { sink, calls, journal, fileAtFinish: () => fileAtFinish };
}

const open = (openEntries: string[], log: Logger = silentLogger) => Outbox.open(path, log, new Set(openEntries));

describe("Outbox", () => {
  it("does not record a notice for a message kept for later as final: the later run continues in its messages", async () => {
    const outbox = open([]);
    let rec!: ReturnType<typeof recordingSink>;
    const sink = outbox.openReply("telegram:k", (j) => (rec = recordingSink(j)).sink);
    rec.journal.messageCreated(0, "701");
    await sink.finish("Hearth's disk is full; your message is kept and will be answered when there is space.", "kept");
    expect(rec.calls).toEqual(["finish:Hearth's disk is full; your message is kept and will be answered when there is space.:kept"]);
    expect(readFileSync(path, "utf8")).not.toContain('"type":"final"');
    expect(outbox.replyOf("telegram:k")?.final).toBeUndefined();

    let again!: ReturnType<typeof recordingSink>;
    const later = outbox.openReply("telegram:k", (j) => (again = recordingSink(j)).sink);
    expect(again.journal.messageIds).toEqual(["701"]);
    await later.finish("The answer.", "answered");
    expect(again.fileAtFinish()).toContain('"type":"final","reply":"telegram:k","kind":"finish","text":"The answer.","outcome":"answered"');
    // After a restart only the real answer could be delivered from the record.
    const reopened = Outbox.open(path, silentLogger, new Set(["telegram:k"]));
    expect(reopened.replyOf("telegram:k")?.final?.text).toBe("The answer.");
  });

  it("records the preview id at once and the final text before the delivery starts", async () => {
    const outbox = open([]);
    let rec!: ReturnType<typeof recordingSink>;
    const sink = outbox.openReply("telegram:a", (j) => (rec = recordingSink(j)).sink);
    rec.journal.messageCreated(0, "501");
    expect(readFileSync(path, "utf8")).toContain('"type":"message","reply":"telegram:a","index":0,"id":"501"');
    sink.textDelta("Hel");
    await sink.finish("Hello.", "answered");
    expect(rec.calls).toEqual(["delta:Hel", "finish:Hello.:answered"]);
    expect(rec.fileAtFinish()).toContain('"type":"final","reply":"telegram:a","kind":"finish","text":"Hello.","outcome":"answered"');
    expect(readFileSync(path, "utf8").trim().split("\n").at(-1)).toContain('"type":"delivered","reply":"telegram:a"');
  });

  it("after a restart, a reply still open resumes in its recorded messages; closed ones are compacted away", () => {
    const first = open([]);
    first.openReply("telegram:a", (j) => recordingSink(j).sink);
    first.openReply("telegram:b", (j) => {
      j.messageCreated(0, "7");
      return recordingSink(j).sink;
    });
    first.openReply("telegram:c", (j) => {
      j.messageCreated(0, "9");
      return recordingSink(j).sink;
    });
    const second = open(["telegram:b"]);
    expect(second.replyOf("telegram:b")).toMatchObject({ id: "telegram:b", messageIds: ["7"], delivered: false });
    expect(second.replyOf("telegram:c")).toBeUndefined();
    let resumed: readonly (string | undefined)[] = [];
    second.openReply("telegram:b", (j) => {
      resumed = j.messageIds;
      return recordingSink(j).sink;
    });
    expect(resumed).toEqual(["7"]);
    expect(readFileSync(path, "utf8")).not.toContain('"9"');
  });

  it("links a message joined by steering to the reply that answers it", () => {
    const outbox = open([]);
    outbox.openReply("telegram:a", (j) => recordingSink(j).sink);
    outbox.recordJoined("telegram:a", "telegram:b");
    const reopened = open(["telegram:a", "telegram:b"]);
    expect(reopened.replyOf("telegram:b")?.id).toBe("telegram:a");
    expect(reopened.replyOf("telegram:b")?.entries).toEqual(["telegram:a", "telegram:b"]);
  });

  it("skips records of the wrong shape, naming the file and the line", () => {
    appendFileSync(path, 'null\n{"type":"final","reply":"telegram:a"}\n{"type":"message","reply":"telegram:a","index":0,"id":"5","ts":1}\n{"type":"mess');
    const warnings: unknown[] = [];
    const outbox = open(["telegram:a"], { ...silentLogger, warn: (event, fields) => void warnings.push([event, fields]) });
    expect(outbox.replyOf("telegram:a")?.messageIds).toEqual(["5"]);
    expect(warnings.map((w) => { const [event, fields] = w as [string, { file: string; lines: number[] }]; return [event, fields.file, fields.lines]; })).toEqual([["state.records_skipped", path, [1, 2, 4]]]);
  });
});

it("a long-running daemon's outbox is compacted as it goes: only open replies stay in the file", async () => {
  const outbox = open([]);
  const sinkOpen = outbox.openReply("telegram:open", (j) => {
    j.messageCreated(0, "42");
    return recordingSink(j).sink;
  });
  for (let i = 0; i < 2_600; i++) await outbox.openReply(`telegram:${i}`, (j) => recordingSink(j).sink).finish(`answer ${i}`);
  const lines = readFileSync(path, "utf8").trim().split("\n");
  expect(lines.length).toBeLessThan(500);
  expect(lines[0]).toContain('"reply":"telegram:open","index":0,"id":"42"');
  expect(open(["telegram:open"]).replyOf("telegram:open")?.messageIds).toEqual(["42"]);
  void sinkOpen;
}, 30_000);

describe("planRecovery", () => {
  it("delivers finished runs from the record, retries unfinished ones isolated with backoff, and gives up only after a crashed trial", async () => {
    const life1 = open([]);
    // a: finished and delivered (only the inbox's 'done' was lost)
    await life1.openReply("telegram:a", (j) => recordingSink(j).sink).finish("A.");
    // b (with c joined): finished, final recorded, delivery never confirmed
    life1.openReply("telegram:b", (j) => {
      j.messageCreated(0, "11");
      return recordingSink(j).sink;
    });
    life1.recordJoined("telegram:b", "telegram:c");
    appendFileSync(path, `${JSON.stringify({ type: "final", reply: "telegram:b", kind: "finish", text: "B and C.", outcome: "answered", ts: 1 })}\n`);
    // d: preview shown, run unfinished, started once → retried; e: its trial crashed → given up, in its preview
    life1.openReply("telegram:d", (j) => {
      j.messageCreated(0, "12");
      return recordingSink(j).sink;
    });
    life1.openReply("telegram:e", (j) => {
      j.messageCreated(0, "13");
      return recordingSink(j).sink;
    });
    const pending = [entry("a", 1), entry("b", 1), entry("c", 1), entry("d", 1), entry("e", 2, 1), entry("f", 0), entry("g", 9)];
    const plan = planRecovery(pending, open(pending.map((e) => e.id)), 5_000);
    expect(plan.delivered.map((e) => e.id)).toEqual(["telegram:a"]);
    expect(plan.redeliver.map((r) => [r.reply.id, r.reply.messageIds, r.reply.final?.text, r.entries.map((e) => e.id)])).toEqual([
      ["telegram:b", ["11"], "B and C.", ["telegram:b", "telegram:c"]],
    ]);
    expect(plan.rerun.map((e) => e.id)).toEqual(["telegram:f"]);
    // Many crashes without a trial (a crash loop) never give a message up: the backoff grows to the stable time.
    expect(plan.suspects.map((s) => [s.entry.id, s.delayMs, s.trial])).toEqual([
      ["telegram:d", 0, false],
      ["telegram:g", 5_000, true],
    ]);
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelayMs(n, 5_000))).toEqual([0, 1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(plan.giveUp).toEqual([entry("e", 2, 1)]);
    expect(GIVEN_UP_TEXT).toMatch(/gave up/);
  });

  it("a message that waited behind crashed runs but never started is never given up", () => {
    const plan = planRecovery([entry("queued", 0)], open(["telegram:queued"]));
    expect(plan.rerun.map((e) => e.id)).toEqual(["telegram:queued"]);
    expect(plan.giveUp).toEqual([]);
  });
});
