// State files carry versions: an older file is migrated by steps (the old one kept as
// <name>.v<N>.bak), a newer one is refused whole and left untouched, never salvaged. Append-only
// JSON-lines files version each record ("v", absent: 1): old records are migrated as they are
// read, the file never rewritten; a newer record stops the reader, the file left as it is.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Inbox } from "../../src/gateway/inbox.ts";
import { Outbox } from "../../src/gateway/outbox.ts";
import { PairingStore } from "../../src/gateway/access/pairing.ts";
import { SessionStore } from "../../src/gateway/sessions.ts";
import { createLogger } from "../../src/process/log.ts";
import { JobStore } from "../../src/scheduler/job-store.ts";
import { UsageLedger } from "../../src/spending/ledger.ts";
import { isUsageRecord, readUsageRecords } from "../../src/spending/usage-record.ts";
import { loadJsonFile, NewerStateError, readJsonLines, readVersionedJsonLines, type RecordVersions, type StateVersions } from "../../src/state/storage.ts";
import { ENDED_KEPT, TaskLog, type TaskRecord } from "../../src/tasks/task-log.ts";

let dir: string;
let lines: string[];
const log = () => createLogger({ level: "debug", sink: { write: (l: string) => void lines.push(l) } });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-versions-"));
  lines = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("loadJsonFile with versions", () => {
  const schema = z.object({ version: z.literal(3), items: z.array(z.object({ name: z.string(), size: z.number() })) });
  const versions: StateVersions = {
    current: 3,
    steps: [
      { from: 0, name: "wrapInObject", apply: (raw) => ({ items: raw.list }) },
      { from: 1, name: "renameTitle", apply: (raw) => ({ ...raw, items: (raw.items as { title: string }[]).map((i) => ({ name: i.title })) }) },
      { from: 2, name: "addSize", apply: (raw) => ({ ...raw, items: (raw.items as { name: string }[]).map((i) => ({ ...i, size: 0 })) }) },
    ],
  };

  it("runs every step from the file's version, keeps the old file, rewrites it and logs one line per step", () => {
    const file = join(dir, "state.json");
    const original = `{"list":[{"title":"a"}]}`;
    writeFileSync(file, original);
    const loaded = loadJsonFile(file, { schema, log: log(), versions });
    expect(loaded).toEqual({ status: "ok", value: { version: 3, items: [{ name: "a", size: 0 }] } });
    expect(readFileSync(`${file}.v0.bak`, "utf8")).toBe(original);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 3, items: [{ name: "a", size: 0 }] });
    const steps = lines.map((l) => JSON.parse(l)).filter((e) => e.event === "state.migrated");
    expect(steps.map((e) => [e.from, e.to, e.step])).toEqual([
      [0, 1, "wrapInObject"],
      [1, 2, "renameTitle"],
      [2, 3, "addSize"],
    ]);
    // Read again: nothing left to do.
    lines = [];
    expect(loadJsonFile(file, { schema, log: log(), versions }).status).toBe("ok");
    expect(lines.filter((l) => l.includes("state.migrated"))).toEqual([]);
  });

  it("refuses a newer file and leaves it exactly as it was, with nothing set aside", () => {
    const file = join(dir, "state.json");
    const text = `{"version":4,"items":[{"name":"a","size":1,"colour":"red"}]}`;
    writeFileSync(file, text);
    expect(() => loadJsonFile(file, { schema, log: log(), versions })).toThrow(NewerStateError);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });
});

describe("Hearth's state files", () => {
  it("a sessions index from a newer Hearth stops the store with a clear sentence instead of dropping its sessions", () => {
    const file = join(dir, "index.json");
    const text = JSON.stringify({ version: 2, sessions: { main: { key: "main", scope: { kind: "main" }, createdAt: 1, lastActivityAt: 1, contextTokens: 0, future: true } }, today: { date: "2026-11-25", usage: {}, costUsd: 0, runs: 0 } });
    writeFileSync(file, text);
    expect(() => SessionStore.open(file, log(), "UTC")).toThrow(
      `${file} is state version 2, written by a newer Hearth; this one reads versions up to 1. Update Hearth (git pull && npm install), or restore the file this version wrote (index.json.v1.bak, if an upgrade left one).`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["index.json"]);
  });

  it("a cron jobs file from a newer Hearth is refused, not emptied", () => {
    const file = join(dir, "jobs.json");
    const text = JSON.stringify({ version: 2, jobs: [{ id: "x", future: true }] });
    writeFileSync(file, text);
    expect(() => new JobStore(file, { timezone: "UTC", minEveryMs: 60_000 }, log()).load()).toThrow(NewerStateError);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("pairing.json from before versions is migrated: every approved sender and pending code kept", () => {
    const file = join(dir, "pairing.json");
    const v0 = { pending: [{ code: "ABCD2345", channel: "telegram", userId: "7", name: "Ann", createdAt: Date.now() }], approved: [{ channel: "discord", userId: "9", name: "Bo", approvedAt: 5 }] };
    writeFileSync(file, JSON.stringify(v0));
    const store = PairingStore.open(file, log());
    expect(store.isApproved("discord", "9")).toBe(true);
    expect(store.list()).toEqual({ pending: v0.pending, approved: v0.approved });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 1, ...v0 });
    expect(JSON.parse(readFileSync(`${file}.v0.bak`, "utf8"))).toEqual(v0);
  });
});

describe("readVersionedJsonLines", () => {
  const check = z.object({ name: z.string(), size: z.number(), unit: z.string() });
  const versions: RecordVersions = {
    current: 3,
    steps: [
      { from: 1, name: "renameTitle", apply: ({ title, ...r }) => ({ ...r, name: title }) },
      { from: 2, name: "addUnit", apply: (r) => ({ ...r, unit: "B" }) },
    ],
  };

  it("brings each record from its own version to the current one, without \"v\", and leaves the file as it was", () => {
    const file = join(dir, "log.jsonl");
    const text = ['{"title":"a","size":1}', '{"v":2,"name":"b","size":2}', '{"v":3,"name":"c","size":3,"unit":"kB"}', '{"title":"d","size":4}', ""].join("\n");
    writeFileSync(file, text);
    const read = readVersionedJsonLines(file, check, versions, log());
    expect(read).toEqual({
      values: [
        { name: "a", size: 1, unit: "B" },
        { name: "b", size: 2, unit: "B" },
        { name: "c", size: 3, unit: "kB" },
        { name: "d", size: 4, unit: "B" },
      ],
      badLines: [],
      problems: [],
    });
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["log.jsonl"]);
  });

  it("skips a record whose version is not a whole number from 1 on, as a record of the wrong shape", () => {
    const file = join(dir, "log.jsonl");
    writeFileSync(file, '{"v":"2","name":"a","size":1}\n{"v":0,"name":"b","size":2}\n{"v":3,"name":"c","size":3,"unit":"B"}\n');
    const read = readVersionedJsonLines(file, check, versions, log());
    expect(read.values).toEqual([{ name: "c", size: 3, unit: "B" }]);
    expect(read.problems).toEqual(['line 1: an unknown record version ("2")', "line 2: an unknown record version (0)"]);
  });

  it("stops at a record of a newer version, naming the file and the line, and changes nothing", () => {
    const file = join(dir, "log.jsonl");
    const text = '{"title":"a","size":1}\n{"v":4,"name":"b","size":2,"colour":"red"}\n';
    writeFileSync(file, text);
    expect(() => readVersionedJsonLines(file, check, versions, log())).toThrow(
      `${file} line 2 is record version 4, written by a newer Hearth; this one reads versions up to 3. Update Hearth (git pull && npm install); the file was left as it is.`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["log.jsonl"]);
  });
});

describe("Hearth's JSON-lines state files", () => {
  /** usage.jsonl lines as Hearth wrote them before records had versions. */
  const OLD_USAGE = [
    '{"at":"2026-11-20T09:00:00.000Z","day":"2026-11-20","session":"main","scope":"main","purpose":"chat","model":"claude-sonnet-4-5","inputTokens":1200,"outputTokens":80,"cacheReadTokens":0,"cacheWrite5mTokens":0,"cacheWrite1hTokens":0,"costUsd":0.0048}',
    '{"kind":"transcription","at":"2026-11-20T09:01:00.000Z","day":"2026-11-20","session":"dm:telegram:7","scope":"shared","purpose":"chat","channel":"telegram","sender":"7","model":"whisper-1","audioSeconds":90,"costUsd":0.009}',
    '{"kind":"web","at":"2026-11-20T09:02:00.000Z","day":"2026-11-20","session":"main","scope":"main","purpose":"chat","model":"(hearth web tools)","inputTokens":0,"outputTokens":0,"cacheReadTokens":0,"cacheWrite5mTokens":0,"cacheWrite1hTokens":0,"localWebSearches":1,"costUsd":0.005}',
  ];

  it("usage.jsonl from before versions reads as it always did, and the ledger still writes lines without \"v\"", () => {
    const file = join(dir, "usage.jsonl");
    writeFileSync(file, `${OLD_USAGE.join("\n")}\n`);
    expect(readUsageRecords(file, log())).toEqual(readJsonLines(file, isUsageRecord));
    expect(readUsageRecords(file).values).toEqual(OLD_USAGE.map((l) => JSON.parse(l)));
    const clock = () => Date.parse("2026-11-20T10:00:00Z");
    const ledger = UsageLedger.open({ file, timezone: "UTC", pricing: {}, log: log(), clock });
    expect(ledger.spent().todayUsd).toBeCloseTo(0.0188, 9);
    expect(ledger.spentBy("dm:telegram:7")).toBe(0.009);
    ledger.recordSpeech({ session: "main", scope: "main", purpose: "chat" }, "tts-1", 100);
    const written = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(written.slice(0, 3)).toEqual(OLD_USAGE);
    expect(JSON.parse(written[3]!)).not.toHaveProperty("v");
  });

  it("a usage record from a newer Hearth stops the ledger instead of leaving its cost out of the budget", () => {
    const file = join(dir, "usage.jsonl");
    const text = `${OLD_USAGE[0]}\n${JSON.stringify({ v: 2, ...JSON.parse(OLD_USAGE[1]!), currency: "EUR" })}\n`;
    writeFileSync(file, text);
    expect(() => UsageLedger.open({ file, timezone: "UTC", pricing: {}, log: log(), clock: Date.now })).toThrow(
      `${file} line 2 is record version 2, written by a newer Hearth; this one reads versions up to 1. Update Hearth (git pull && npm install); the file was left as it is.`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("a tasks.jsonl record from a newer Hearth stops the log before its compaction could drop it", () => {
    const file = join(dir, "tasks.jsonl");
    // More ended tasks than are kept: opening would rewrite the file without the oldest.
    const records: TaskRecord[] = [];
    for (let i = 0; i <= ENDED_KEPT; i++) {
      const id = `t${i}`;
      records.push(
        { type: "spawned", id, label: `task ${i}`, task: "look", parent: "main", target: { channel: "cli", chatId: "local" }, depth: 1, at: i },
        { type: "result", id, end: "done", text: "ok", costUsd: 0, at: i },
        { type: "noted", id, at: i },
      );
    }
    const text = `${records.map((r) => JSON.stringify(r)).join("\n")}\n{"v":2,"type":"paused","id":"t0","at":9}\n`;
    writeFileSync(file, text);
    expect(() => TaskLog.open(file, log())).toThrow(NewerStateError);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["tasks.jsonl"]);

    // The same file without the newer line: read as before, and compacted.
    writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const tl = TaskLog.open(file, log());
    expect(tl.tasks.size).toBe(ENDED_KEPT);
    expect(readFileSync(file, "utf8")).not.toContain('"v"');
  });

  it("inbox.jsonl and outbox.jsonl: a record from a newer Hearth stops the open before the compaction rewrites the file", () => {
    const inbox = join(dir, "inbox.jsonl");
    const outbox = join(dir, "outbox.jsonl");
    const inboxText = '{"type":"seen","id":"telegram:1"}\n{"v":2,"type":"seen","id":"telegram:2","channel":"telegram"}\n';
    const outboxText = '{"type":"delivered","reply":"r1","ts":1}\n{"v":2,"type":"delivered","reply":"r2","ts":2,"receipt":"read"}\n';
    writeFileSync(inbox, inboxText);
    writeFileSync(outbox, outboxText);
    expect(() => Inbox.open(inbox, log())).toThrow(`${inbox} line 2 is record version 2, written by a newer Hearth`);
    expect(() => Outbox.open(outbox, log(), new Set())).toThrow(`${outbox} line 2 is record version 2, written by a newer Hearth`);
    expect(readFileSync(inbox, "utf8")).toBe(inboxText);
    expect(readFileSync(outbox, "utf8")).toBe(outboxText);

    // Without the newer lines, read and compacted as before, still without "v".
    writeFileSync(inbox, '{"type":"seen","id":"telegram:1"}\n');
    Inbox.open(inbox, log());
    expect(readFileSync(inbox, "utf8")).toBe('{"type":"seen","id":"telegram:1"}\n');
  });
});
