// Usage accounting through a real in-process gateway: one usage.jsonl record per model call,
// priced with the cache-write TTLs and cache reads, tagged with the run's session, scope,
// sender and purpose; `hearth usage` sums exactly those records; compaction and the memory
// flush use compaction.model and are recorded as their own purposes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runUsage } from "../../src/cli/usage.ts";
import { UsageLedger } from "../../src/spending/ledger.ts";
import { createLogger } from "../../src/process/log.ts";
import { isUsageRecord, LOCAL_WEB_MODEL, usageFile, type TokenUsageRecord, type UsageRecord } from "../../src/spending/usage-record.ts";
import { localSearchPricePerThousand } from "../../src/spending/pricing.ts";
import { emptyUsage } from "../../src/agent/messages.ts";
import { formatUsageReport, roundUsd, usageReport } from "../../src/spending/usage-report.ts";
import { readJsonLines } from "../../src/state/storage.ts";
import { localDate } from "../../src/process/time.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import type { TestChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let t: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  t = undefined;
});
afterEach(async () => {
  await t?.stop();
  await fake.close();
});

/** The records of a home where only models were paid for. */
const records = (home: string): TokenUsageRecord[] => {
  const { values, badLines } = readJsonLines(usageFile(home), isUsageRecord);
  expect(badLines).toEqual([]);
  return values.map((r) => {
    if (r.kind === "transcription" || r.kind === "speech" || r.kind === "embedding") throw new Error(`unexpected ${r.kind} record`);
    return r;
  });
};

async function ask(channel: TestChannel, msg: { chat: string; type: "dm" | "group"; sender: string; text: string; isOwner?: boolean }): Promise<string> {
  const id = channel.say(msg);
  await waitFor(`the answer to ${msg.text.slice(0, 20)}`, () => channel.replies.has(id), 15_000);
  return channel.replies.get(id)![0]!;
}

function capture() {
  let out = "";
  let err = "";
  return {
    io: { stdout: { write: (s: string) => ((out += s), true) }, stderr: { write: (s: string) => ((err += s), true) } } as unknown as { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
    out: () => out,
    err: () => err,
  };
}

describe("usage records", () => {
  it("records a call with 5-minute and 1-hour cache writes and a cache read, priced exactly", async () => {
    t = await startTestGateway(fake.url, { memory: false });
    fake.enqueue(
      text("Hello!", {
        usage: { input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 3_000, cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 } },
      }),
    );
    expect(await ask(t.channel, { chat: "1", type: "dm", sender: "1", text: "hi" })).toBe("Hello!");
    // Default model claude-sonnet-5-5 is priced as Sonnet: $3 in, $15 out, writes 3.75 (5 min) / 6 (1 h), reads 0.30.
    // 100·3 + 50·15 + 1000·3.75 + 2000·6 + 10000·0.3 = 19,800 per million = $0.0198.
    const rs = records(t.home);
    expect(rs).toEqual([
      {
        kind: "model",
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        day: localDate(Date.now(), t.config.timezone),
        session: "main",
        scope: "main",
        purpose: "chat",
        channel: "telegram",
        sender: "user1",
        model: "claude-sonnet-5-5",
        inputTokens: 100,
        outputTokens: 50,
        cacheReadTokens: 10_000,
        cacheWrite5mTokens: 1_000,
        cacheWrite1hTokens: 2_000,
        costUsd: expect.closeTo(0.0198, 12),
      },
    ]);
    const status = t.gateway.status();
    expect(status.budget.today.spentUsd).toBeCloseTo(0.0198, 12);
    expect(status.budget.thisMonth.spentUsd).toBeCloseTo(0.0198, 12);
  });

  it("records every call of a run with tools, and a group's calls as shared with the member as sender", async () => {
    t = await startTestGateway(fake.url, { memory: false, telegram: { groups: { policy: "open" } } });
    fake.enqueue(toolCall("read", { path: "SOUL.md" }, { usage: { input_tokens: 200, output_tokens: 20 } }), text("Read it.", { usage: { input_tokens: 300, output_tokens: 10 } }));
    await ask(t.channel, { chat: "-100", type: "group", sender: "7", text: "@bot read your soul" });
    const rs = records(t.home);
    expect(rs.map((r) => [r.session, r.scope, r.purpose, r.channel, r.sender, r.inputTokens, r.outputTokens])).toEqual([
      ["group:telegram:-100", "shared", "chat", "telegram", "user7", 200, 20],
      ["group:telegram:-100", "shared", "chat", "telegram", "user7", 300, 10],
    ]);
    expect(t.gateway.context.usage.spent().sharedTodayUsd).toBeCloseTo(rs[0]!.costUsd + rs[1]!.costUsd, 12);
  });

  it("a reply stopped with /stop mid-stream is recorded as unfinished, with its input and the output that arrived", async () => {
    t = await startTestGateway(fake.url, { memory: false });
    fake.enqueue(text("x".repeat(4_000), { chunkSize: 40, chunkDelayMs: 50, usage: { input_tokens: 2_000, output_tokens: 999 } }));
    const id = t.channel.say({ chat: "1", type: "dm", sender: "1", text: "write a lot" });
    await fake.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 300));
    await ask(t.channel, { chat: "1", type: "dm", sender: "1", text: "/stop" });
    await waitFor("the stopped run's reply", () => t!.channel.replies.has(id), 15_000);
    const rs = records(t.home);
    expect(rs).toHaveLength(1);
    const [r] = rs;
    // The API's final count (999) never arrived: at least one 40-character delta did, and not all 100.
    expect(r).toMatchObject({ session: "main", purpose: "chat", inputTokens: 2_000, cacheReadTokens: 0, unfinished: true });
    expect(r!.outputTokens % 10).toBe(0);
    expect(r!.outputTokens).toBeGreaterThanOrEqual(10);
    expect(r!.outputTokens).toBeLessThan(1_000);
    // Sonnet: $3 a million in, $15 out.
    expect(r!.costUsd).toBeCloseTo((2_000 * 3 + r!.outputTokens * 15) / 1e6, 12);
    expect(t.gateway.status().budget.today.spentUsd).toBeCloseTo(r!.costUsd, 12);
  });

  it("takes session and purpose from the run: a heartbeat in its own session is recorded as the owner's", async () => {
    t = await startTestGateway(fake.url, { memory: false });
    fake.enqueue(text("HEARTBEAT_OK", { usage: { input_tokens: 40, output_tokens: 3 } }));
    let finished = "";
    t.gateway.context.lanes.submit(
      "heartbeat",
      {
        entryId: "hb-1",
        turn: { role: "user", kind: "system", text: "Heartbeat check-in.", ts: Date.now() },
        source: { channel: "heartbeat", sender: "Hearth", text: "(heartbeat)" },
        replyKey: "hb-1",
        steerable: false,
        purpose: "heartbeat",
        openReply: () => ({ textDelta: () => {}, textReset: () => {}, toolStarted: () => {}, toolFinished: () => {}, finish: async (x) => void (finished = x), fail: async () => {} }),
        arrivedAt: Date.now(),
      },
      "followup",
    );
    await waitFor("the heartbeat run", () => finished !== "");
    expect(records(t.home).map((r) => [r.session, r.scope, r.purpose, r.channel, r.sender])).toEqual([["heartbeat", "main", "heartbeat", "heartbeat", "Hearth"]]);
    expect(t.gateway.context.usage.spent().sharedTodayUsd).toBe(0);
  });
});

describe("hearth usage", () => {
  it("reports totals equal to the sum of the records, by each grouping, and exact text", async () => {
    t = await startTestGateway(fake.url, { memory: false, telegram: { groups: { policy: "open" } } });
    fake.enqueue(
      text("one", { usage: { input_tokens: 1000, output_tokens: 100 } }),
      text("two", { usage: { input_tokens: 2000, output_tokens: 200, cache_read_input_tokens: 5000 } }),
      text("three", { usage: { input_tokens: 500, output_tokens: 40, cache_creation_input_tokens: 800 } }),
    );
    await ask(t.channel, { chat: "1", type: "dm", sender: "1", text: "a" });
    await ask(t.channel, { chat: "-100", type: "group", sender: "7", text: "b" });
    await ask(t.channel, { chat: "-100", type: "group", sender: "8", text: "c" });
    const rs = records(t.home);
    expect(rs).toHaveLength(3);
    const sum = (f: (r: TokenUsageRecord) => number) => rs.reduce((s, r) => s + f(r), 0);
    for (const by of ["day", "session", "sender", "purpose"]) {
      const c = capture();
      expect(runUsage(t.home, ["--by", by, "--since", "1h", "--json"], c.io)).toBe(0);
      const rep = JSON.parse(c.out());
      expect(rep.total).toEqual({
        calls: 3,
        inputTokens: sum((r) => r.inputTokens),
        outputTokens: sum((r) => r.outputTokens),
        cacheReadTokens: sum((r) => r.cacheReadTokens),
        cacheWrite5mTokens: sum((r) => r.cacheWrite5mTokens),
        cacheWrite1hTokens: 0,
        webSearches: 0,
        webFetches: 0,
        audioSeconds: 0,
        costUsd: roundUsd(sum((r) => r.costUsd)),
      });
      expect(rep.rows.reduce((s: number, r: { calls: number }) => s + r.calls, 0)).toBe(3);
    }
    const c = capture();
    runUsage(t.home, ["--by", "sender", "--since", "2020-01-01"], c.io);
    // 1000·3 + 100·15 = 4,500 → $0.0045; 2000·3 + 200·15 + 5000·0.3 = 10,500 → $0.0105; 500·3 + 40·15 + 800·3.75 = 5,100 → $0.0051.
    expect(c.out()).toBe(
      [
        "Usage since 2020-01-01 00:00 UTC (2020-01-01), by sender:",
        "SENDER          CALLS  INPUT  CACHE WRITE  CACHE READ  OUTPUT     COST",
        "telegram:user7      1  2,000            0       5,000     200  $0.0105",
        "telegram:user8      1    500          800           0      40  $0.0051",
        "telegram:user1      1  1,000            0           0     100  $0.0045",
        "Total               3  3,500          800       5,000     340  $0.0201",
        "",
      ].join("\n"),
    );
  });

  it("refuses an unknown grouping or period with exit code 2 and says what is accepted", async () => {
    const { main } = await import("../../src/cli.ts");
    const c = capture();
    expect(await main(["usage", "--by", "model"], { stdin: process.stdin, ...c.io })).toBe(2);
    expect(c.err()).toMatch(/^hearth: --by must be one of day, session, sender, purpose, kind \(got "model"\)\./);
    const d = capture();
    expect(await main(["usage", "--since", "last week"], { stdin: process.stdin, ...d.io })).toBe(2);
    expect(d.err()).toMatch(/^hearth: --since takes a duration such as "7d" or "24h", or a date such as "2026-11-01" \(got "last week"\)\./);
  });
});

describe("usage kinds", () => {
  const base = { at: "2026-11-20T10:00:00.000Z", day: "2026-11-20", session: "main", scope: "main", purpose: "chat" };
  const tokens = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 };

  it("reads lines written before kinds as model calls (or web use, by their model), and sums each kind apart", () => {
    const lines = [
      { ...base, model: "claude-sonnet-4-5", ...tokens, costUsd: 0.001 },
      { ...base, model: "(hearth web tools)", ...tokens, inputTokens: 0, outputTokens: 0, localWebFetches: 1, costUsd: 0 },
      { ...base, kind: "transcription", model: "whisper-large-v3", audioSeconds: 90, costUsd: 0.002775 },
      { ...base, kind: "transcription", model: "whisper-1", audioSeconds: null, costUsd: 0 },
    ];
    expect(lines.every(isUsageRecord)).toBe(true);
    const rep = usageReport(lines as UsageRecord[], "kind", 0);
    expect(rep.rows.map((r) => [r.key, r.calls, r.inputTokens, r.webFetches, r.audioSeconds, r.costUsd])).toEqual([
      ["transcription", 2, 0, 0, 90, 0.002775],
      ["model", 1, 10, 0, 0, 0.001],
      ["web", 0, 0, 1, 0, 0],
    ]);
    expect(formatUsageReport(rep, "2020-01-01").split("\n").slice(1)).toEqual([
      "KIND           CALLS  INPUT  CACHE WRITE  CACHE READ  OUTPUT  SEARCHES  FETCHES  AUDIO     COST",
      "transcription      2      0            0           0       0         0        0   1:30  $0.0028",
      "model              1     10            0           0       5         0        0      -  $0.0010",
      "web                0      0            0           0       0         0        1      -  $0.0000",
      "Total              3     10            0           0       5         0        1   1:30  $0.0038",
      "",
    ]);
  });

  it("a transcription nobody measured is recorded with a null length at no cost, and the operator is warned", () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-usage-"));
    try {
      const lines: string[] = [];
      const log = createLogger({ level: "info", sink: { write: (l: string) => void lines.push(l) } });
      const ledger = UsageLedger.open({ file: join(dir, "usage.jsonl"), timezone: "UTC", pricing: {}, transcriptionPerMinuteUsd: 0.006, log, clock: () => Date.parse("2026-11-20T10:00:00Z") });
      const tag = { session: "main", scope: "main" as const, purpose: "chat" as const, channel: "cli" };
      expect(ledger.recordTranscription(tag, "whisper-1", null)).toMatchObject({ kind: "transcription", audioSeconds: null, costUsd: 0 });
      expect(ledger.recordTranscription(tag, "whisper-1", 90)).toMatchObject({ kind: "transcription", audioSeconds: 90, costUsd: 0.009 });
      expect(lines.map((l) => JSON.parse(l).event)).toEqual(["usage.transcription_length_unknown"]);
      expect(ledger.spent().todayUsd).toBe(0.009);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prices Hearth's own web searches per request (Brave's list price unless configured, SearXNG free); a page fetch is free", () => {
    expect(localSearchPricePerThousand({ provider: "brave" })).toBe(5);
    expect(localSearchPricePerThousand({ provider: "searxng" })).toBe(0);
    expect(localSearchPricePerThousand({ provider: "brave", pricing: { perThousandUsd: 0 } })).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "hearth-usage-"));
    try {
      const log = createLogger({ level: "info", sink: { write: () => {} } });
      const ledger = UsageLedger.open({ file: join(dir, "usage.jsonl"), timezone: "UTC", pricing: {}, localSearchPerThousandUsd: 5, log, clock: () => Date.parse("2026-11-20T10:00:00Z") });
      const tag = { session: "group:telegram:-1", scope: "shared" as const, purpose: "chat" as const, channel: "telegram" };
      expect(ledger.record(tag, LOCAL_WEB_MODEL, { ...emptyUsage(), localWebSearches: 1 })).toMatchObject({ kind: "web", costUsd: 0.005 });
      expect(ledger.record(tag, LOCAL_WEB_MODEL, { ...emptyUsage(), localWebFetches: 1 })).toMatchObject({ kind: "web", costUsd: 0 });
      expect(ledger.spent()).toMatchObject({ todayUsd: 0.005, sharedTodayUsd: 0.005 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a line of an unknown kind, or a transcription without a usable length, as unreadable", () => {
    expect(isUsageRecord({ ...base, kind: "transcription", model: "whisper-1", audioSeconds: -3, costUsd: 0 })).toBe(false);
    expect(isUsageRecord({ ...base, kind: "transcription", model: "whisper-1", costUsd: 0 })).toBe(false);
    expect(isUsageRecord({ ...base, kind: "telepathy", model: "x", ...tokens, costUsd: 0 })).toBe(false);
    expect(isUsageRecord({ ...base, model: "x", costUsd: 0 })).toBe(false);
  });
});

describe("compaction and the memory flush", () => {
  const isSummary = (req: RecordedRequest) => JSON.stringify(req.body.system ?? "").includes("You write the running summary");
  const isFlush = (req: RecordedRequest) => JSON.stringify(req.body.messages).includes("about to be compacted");
  // Input tokens as the API would count them (about 0.3 per byte), so the context estimate is calibrated.
  const realistic = (reply: (req: RecordedRequest) => string) => ({
    type: "respond" as const,
    fn: (req: RecordedRequest) => text(reply(req), { usage: { input_tokens: Math.ceil(Buffer.byteLength(req.rawBody) * 0.3) } }),
  });

  it("use compaction.model and are recorded as purposes compaction and flush", async () => {
    t = await startTestGateway(fake.url, { config: { compaction: { model: "claude-haiku-4-5" } } });
    fake.setDefault(realistic((req) => (isSummary(req) ? "Summary: cats." : isFlush(req) ? "done" : "ok")));
    // The owner's own words: another person's would be outside content, whose flush is skipped.
    for (let i = 0; i < 6; i++) await ask(t.channel, { chat: "1", type: "dm", sender: "1", isOwner: true, text: `about cats ${i} ${"meow ".repeat(8000)}` });
    expect(await ask(t.channel, { chat: "1", type: "dm", sender: "1", isOwner: true, text: "/compact" })).toMatch(/^Compacted: about/);
    const byPurpose = (p: string) => records(t!.home).filter((r) => r.purpose === p);
    expect(fake.requests.filter(isSummary).map((r) => r.body.model)).toEqual(["claude-haiku-4-5"]);
    expect(fake.requests.filter(isFlush).map((r) => r.body.model)).toEqual(["claude-haiku-4-5"]);
    expect(fake.requests.filter((r) => !isSummary(r) && !isFlush(r)).every((r) => r.body.model === "claude-sonnet-5-5")).toBe(true);
    expect(byPurpose("compaction").map((r) => [r.session, r.model])).toEqual([["main", "claude-haiku-4-5"]]);
    expect(byPurpose("flush").map((r) => [r.session, r.model])).toEqual([["main", "claude-haiku-4-5"]]);
    expect(byPurpose("chat")).toHaveLength(6);
  });

  it("default to the main model", async () => {
    t = await startTestGateway(fake.url);
    fake.setDefault(realistic((req) => (isSummary(req) ? "Summary: dogs." : isFlush(req) ? "done" : "ok")));
    for (let i = 0; i < 6; i++) await ask(t.channel, { chat: "1", type: "dm", sender: "1", text: `about dogs ${i} ${"woof ".repeat(8000)}` });
    await ask(t.channel, { chat: "1", type: "dm", sender: "1", text: "/compact" });
    expect(fake.requests.filter(isSummary).map((r) => r.body.model)).toEqual(["claude-sonnet-5-5"]);
    expect(records(t.home).filter((r) => r.purpose === "compaction").map((r) => r.model)).toEqual(["claude-sonnet-5-5"]);
  });
});
