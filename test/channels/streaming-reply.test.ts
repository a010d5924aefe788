import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { splitMessage } from "../../src/channels/chunk.ts";
import {
  EMPTY_ANSWER_TEXT,
  INTERRUPTED_PREVIEW_TEXT,
  ReplyDeliveryError,
  StreamingReply,
  type ReplyTransport,
  type StreamingReplyOptions,
} from "../../src/channels/streaming-reply.ts";
import type { ReplyJournal } from "../../src/channels/channel.ts";
import { createLogger, type Logger } from "../../src/process/log.ts";

type Call =
  | { op: "send"; id: string; text: string; final: boolean; at: number }
  | { op: "edit"; id: string; text: string; final: boolean; at: number }
  | { op: "typing"; at: number };

/** A recording transport. Delays use (fake) timers; failures are scripted per call. */
class FakeTransport implements ReplyTransport {
  readonly calls: Call[] = [];
  sendDelayMs = 0;
  editDelayMs = 0;
  /** Decides whether a send/edit fails; called before it is recorded as delivered. */
  failSend: (text: string, final: boolean) => boolean = () => false;
  failEdit: (id: string, text: string, final: boolean) => boolean = () => false;
  readonly attempts: Array<{ op: "send" | "edit"; text: string; final: boolean }> = [];
  #nextId = 1;

  async send(text: string, opts: { final: boolean }): Promise<string> {
    this.attempts.push({ op: "send", text, final: opts.final });
    if (this.sendDelayMs) await sleep(this.sendDelayMs);
    if (this.failSend(text, opts.final)) throw new Error("send failed: ETIMEDOUT");
    const id = `m${this.#nextId++}`;
    this.calls.push({ op: "send", id, text, final: opts.final, at: Date.now() });
    return id;
  }

  async edit(id: string, text: string, opts: { final: boolean }): Promise<void> {
    this.attempts.push({ op: "edit", text, final: opts.final });
    if (this.editDelayMs) await sleep(this.editDelayMs);
    if (this.failEdit(id, text, opts.final)) throw new Error("Bad Request: message to edit not found");
    this.calls.push({ op: "edit", id, text, final: opts.final, at: Date.now() });
  }

  sends(): Extract<Call, { op: "send" }>[] {
    return this.calls.filter((c): c is Extract<Call, { op: "send" }> => c.op === "send");
  }

  edits(): Extract<Call, { op: "edit" }>[] {
    return this.calls.filter((c): c is Extract<Call, { op: "edit" }> => c.op === "edit");
  }

  typings(): number {
    return this.calls.filter((c) => c.op === "typing").length;
  }
}

/** Adds a typing capability that records calls and resolves (or rejects, like the emulator). */
function withTyping(t: FakeTransport, behaviour: "ok" | "reject"): FakeTransport & { typing(): Promise<void> } {
  return Object.assign(t, {
    typing: async () => {
      t.calls.push({ op: "typing", at: Date.now() });
      if (behaviour === "reject") throw new Error("Internal Server Error: sendChatAction");
    },
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let logLines: Array<{ level: string; event: string }>;
let log: Logger;

function reply(t: ReplyTransport, opts: Partial<StreamingReplyOptions> = {}): StreamingReply {
  return new StreamingReply(t, { maxLength: 4000, editIntervalMs: 1000, log, ...opts });
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  logLines = [];
  log = createLogger({
    level: "debug",
    sink: { write: (line) => logLines.push(JSON.parse(line) as { level: string; event: string }) },
  });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("StreamingReply preview", () => {
  it("streams 30 deltas over 3 s as one message and throttled edits, the last one final", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    const parts = Array.from({ length: 30 }, (_, i) => `word${i} `);
    for (const part of parts) {
      r.textDelta(part);
      await vi.advanceTimersByTimeAsync(100);
    }
    const full = parts.join("");
    await r.finish(full);

    expect(t.sends()).toHaveLength(1);
    expect(t.sends()[0]).toMatchObject({ text: "word0", final: false, at: 0 });
    const previews = t.edits().filter((e) => !e.final);
    expect(previews.length).toBeGreaterThanOrEqual(2);
    const times = [0, ...previews.map((e) => e.at)];
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
    for (const e of t.edits()) expect(e.id).toBe("m1");
    const last = t.calls.at(-1)!;
    expect(last).toMatchObject({ op: "edit", id: "m1", text: full.trim(), final: true });
  });

  it("merges updates that arrive during a slow edit into one next edit with the latest text", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("a"); // send at 0
    await vi.advanceTimersByTimeAsync(1000);
    t.editDelayMs = 3000;
    r.textDelta("b"); // edit starts at 1000, lands at 4000
    await vi.advanceTimersByTimeAsync(10);
    for (const c of "cdefghij") {
      r.textDelta(c);
      await vi.advanceTimersByTimeAsync(200);
    }
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.attempts.filter((a) => a.op === "edit").map((a) => a.text)).toEqual(["ab", "abcdefghij"]);
    expect(t.edits().map((e) => e.at)).toEqual([4000, 7000]);
    t.editDelayMs = 0;
    await r.finish("abcdefghij");
  });

  it("merges deltas that arrive while an edit waits for the interval", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("x");
    for (let i = 0; i < 9; i++) {
      await vi.advanceTimersByTimeAsync(100);
      r.textDelta(String(i));
    }
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.edits().map((e) => [e.text, e.at])).toEqual([["x012345678", 1000]]);
    await r.finish("done");
  });

  it("shows tool progress lines in the preview, never in the final text", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("Let me look.");
    await vi.advanceTimersByTimeAsync(1000);
    r.toolStarted("exec", "ls -la");
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "Let me look.\n\n⏳ exec: ls -la" });
    r.toolFinished("exec", false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "Let me look.\n\n✗ exec: ls -la" });
    r.toolStarted("read", "a.txt");
    r.textDelta(" Nothing there.");
    await vi.advanceTimersByTimeAsync(1000);
    // New text drops the finished tool's line; the running one stays.
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "Let me look. Nothing there.\n\n⏳ read: a.txt" });
    await r.finish("The folder is empty.");
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "The folder is empty.", final: true });
    for (const c of t.calls) if (c.op !== "typing" && c.final) expect(c.text).not.toMatch(/⏳|✓|✗/);
  });

  it("creates the preview from a tool line alone and shortens long summaries", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.toolStarted("exec", `find / -name "*.log" ${"-o -name x ".repeat(20)}\nsecond line`);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.sends()).toHaveLength(1);
    expect(t.sends()[0]!.text).toMatch(/^⏳ exec: find \/ -name "\*\.log" .*…$/);
    expect(t.sends()[0]!.text.length).toBeLessThan(80);
    await r.finish("ok");
  });

  it("shows the tail of a preview longer than a message", async () => {
    const t = new FakeTransport();
    const r = reply(t, { maxLength: 200 });
    r.textDelta("start ");
    for (let i = 0; i < 60; i++) r.textDelta(`w${i} `);
    r.toolStarted("read", "notes.md");
    await vi.advanceTimersByTimeAsync(1000);
    const preview = t.calls.at(-1) as Extract<Call, { op: "edit" }>;
    expect(preview.text.length).toBeLessThanOrEqual(200);
    expect(preview.text.startsWith("…")).toBe(true);
    expect(preview.text).toContain("w59\n\n⏳ read: notes.md");
    await r.finish("short");
  });

  it("replaces the accumulated text on textReset", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("first attempt");
    await vi.advanceTimersByTimeAsync(1000);
    r.textReset("second");
    r.textDelta(" try");
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "second try", final: false });
    await r.fail("model unavailable");
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "second try\n\n⚠️ model unavailable", final: true });
  });
});

describe("StreamingReply final delivery", () => {
  it("delivers the final text at once, not at the next throttle tick", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("Hello"); // send at 0
    await vi.advanceTimersByTimeAsync(100);
    r.textDelta(" world"); // an edit is scheduled for 1000
    await vi.advanceTimersByTimeAsync(100);
    await r.finish("Hello world!");
    expect(t.edits()).toEqual([{ op: "edit", id: "m1", text: "Hello world!", final: true, at: 200 }]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.edits()).toHaveLength(1); // the scheduled preview edit was cancelled
  });

  it("waits only for the request in flight, then delivers without the throttle", async () => {
    const t = new FakeTransport();
    t.sendDelayMs = 300;
    const r = reply(t);
    r.textDelta("Hel"); // preview send lands at 300
    await vi.advanceTimersByTimeAsync(100);
    const done = r.finish("Hello");
    await vi.advanceTimersByTimeAsync(300);
    await done;
    expect(t.calls.map((c) => [c.op, c.at])).toEqual([
      ["send", 300],
      ["edit", 300],
    ]);
    expect(t.edits()[0]).toMatchObject({ id: "m1", text: "Hello", final: true });
  });

  it("splits a long final text: the preview becomes chunk 1, the rest are new messages", async () => {
    const t = new FakeTransport();
    const r = reply(t, { maxLength: 2000 });
    const para = (n: number) => `${"lorem ipsum ".repeat(Math.floor(n / 12))}end.`;
    const final = [para(900), para(900), para(900), para(900), para(900)].join("\n\n");
    r.textDelta(final.slice(0, 50));
    await vi.advanceTimersByTimeAsync(10);
    await r.finish(final);
    const chunks = splitMessage(final, 2000);
    expect(chunks.length).toBe(3);
    expect(t.calls.slice(1).map((c) => (c.op === "typing" ? c : [c.op, c.text, c.final]))).toEqual([
      ["edit", chunks[0], true],
      ["send", chunks[1], true],
      ["send", chunks[2], true],
    ]);
  });

  it("sends the final text as new messages when there was no preview", async () => {
    const t = new FakeTransport();
    const r = reply(t, { maxLength: 100 });
    await r.finish(`${"a ".repeat(40)}\n\n${"b ".repeat(40)}`);
    expect(t.calls.map((c) => c.op === "send" && [c.text.slice(0, 3), c.final])).toEqual([
      ["a a", true],
      ["b b", true],
    ]);
  });

  it("delivers exactly once: a second finish or fail and later deltas are ignored", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("partial");
    await vi.advanceTimersByTimeAsync(10);
    await Promise.all([r.finish("Final."), r.finish("Final.")]);
    await r.fail("late failure");
    r.textDelta(" more");
    r.toolStarted("exec", "ls");
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.calls.map((c) => c.op !== "typing" && [c.op, c.text, c.final])).toEqual([
      ["send", "partial", false],
      ["edit", "Final.", true],
    ]);
    expect(logLines.filter((l) => l.event === "reply.call_after_finish").every((l) => l.level === "debug")).toBe(true);
    expect(logLines.filter((l) => l.event === "reply.call_after_finish")).toHaveLength(4);
  });

  it("fail shows the message after the partial text, or alone", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("I was saying");
    await vi.advanceTimersByTimeAsync(10);
    await r.fail("The model is unavailable. Try again later.");
    expect(t.calls.at(-1)).toMatchObject({
      op: "edit",
      text: "I was saying\n\n⚠️ The model is unavailable. Try again later.",
      final: true,
    });

    const t2 = new FakeTransport();
    await reply(t2).fail("Stopped.");
    expect(t2.calls).toEqual([{ op: "send", id: "m1", text: "⚠️ Stopped.", final: true, at: 10 }]);
  });

  it("replaces a preview with a short note when the final text is empty", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.toolStarted("exec", "true");
    await vi.advanceTimersByTimeAsync(10);
    await r.finish("  \n ");
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", id: "m1", text: EMPTY_ANSWER_TEXT, final: true });

    const t2 = new FakeTransport();
    await reply(t2).finish("");
    expect(t2.calls).toEqual([]);
  });

  it("sends the chunk as a new message when the final edit of the preview fails", async () => {
    const t = new FakeTransport();
    t.failEdit = (_id, _text, final) => final;
    const r = reply(t);
    r.textDelta("draft");
    await vi.advanceTimersByTimeAsync(10);
    await r.finish("Final answer.");
    // The preview that could not take the answer is marked, not left as a stale half-answer.
    expect(t.calls.map((c) => c.op !== "typing" && [c.op, c.text, c.final])).toEqual([
      ["send", "draft", false],
      ["edit", INTERRUPTED_PREVIEW_TEXT, false],
      ["send", "Final answer.", true],
    ]);
    expect(logLines.some((l) => l.event === "reply.final_edit_failed")).toBe(true);
  });

  it("retries a failed final send with backoff, never sending a chunk twice", async () => {
    const t = new FakeTransport();
    let failures = 2;
    t.failSend = (_text, final) => final && failures-- > 0;
    const r = reply(t, { sendRetryDelaysMs: [100, 400, 1600], maxLength: 50 });
    const done = r.finish(`${"x".repeat(40)}\n\n${"y".repeat(40)}`);
    await vi.advanceTimersByTimeAsync(10_000);
    await done;
    expect(t.sends().map((s) => [s.text.slice(0, 2), s.at])).toEqual([
      ["xx", 500],
      ["yy", 500],
    ]);
    expect(t.attempts.map((a) => a.text.slice(0, 2))).toEqual(["xx", "xx", "xx", "yy"]);
  });

  it("rejects with ReplyDeliveryError when a final send keeps failing", async () => {
    const t = new FakeTransport();
    t.failSend = () => true;
    const r = reply(t, { sendRetryDelaysMs: [100, 200] });
    const done = r.finish("hello");
    const outcome = expect(done).rejects.toBeInstanceOf(ReplyDeliveryError);
    await vi.advanceTimersByTimeAsync(1000);
    await outcome;
    expect(t.attempts).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("leaves no timers behind after finish", async () => {
    const t = withTyping(new FakeTransport(), "ok");
    const r = reply(t);
    r.textDelta("a");
    await vi.advanceTimersByTimeAsync(50);
    r.textDelta("b"); // schedules a preview edit
    r.toolStarted("exec", "sleep 1");
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    await r.finish("ab");
    expect(vi.getTimerCount()).toBe(0);

    const idle = reply(withTyping(new FakeTransport(), "ok"));
    expect(vi.getTimerCount()).toBe(1); // the typing refresh
    await idle.fail("aborted");
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("StreamingReply typing indicator", () => {
  it("shows typing while waiting, refreshes it, and stops at the first text", async () => {
    const t = withTyping(new FakeTransport(), "ok");
    const r = reply(t, { typingIntervalMs: 4000 });
    expect(t.typings()).toBe(1);
    await vi.advanceTimersByTimeAsync(9000);
    expect(t.typings()).toBe(3); // at 0, 4000, 8000
    r.textDelta("Here");
    await vi.advanceTimersByTimeAsync(20_000);
    expect(t.typings()).toBe(3);
    await r.finish("Here it is.");
    expect(t.typings()).toBe(3);
  });

  it("stops calling typing, quietly, when the platform rejects it", async () => {
    const t = withTyping(new FakeTransport(), "reject");
    const r = reply(t, { typingIntervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.typings()).toBe(1);
    r.textDelta("works anyway");
    await r.finish("works anyway");
    expect(t.calls.at(-1)).toMatchObject({ op: "edit", text: "works anyway", final: true });
    const typingLogs = logLines.filter((l) => l.event.includes("typing"));
    expect(typingLogs.length).toBeGreaterThan(0);
    expect(typingLogs.every((l) => l.level === "debug")).toBe(true);
  });

  it("stops typing when the reply ends without any text", async () => {
    const t = withTyping(new FakeTransport(), "ok");
    const r = reply(t, { typingIntervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(1500);
    await r.finish("");
    const before = t.typings();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.typings()).toBe(before);
  });
});

describe("StreamingReply preview failures", () => {
  it("stops previews after a failed first send and delivers the final text as a new message", async () => {
    const t = new FakeTransport();
    t.failSend = (_text, final) => !final;
    const r = reply(t);
    r.textDelta("a");
    await vi.advanceTimersByTimeAsync(10);
    r.textDelta("b");
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.attempts).toHaveLength(1);
    await r.finish("ab");
    expect(t.calls.map((c) => c.op !== "typing" && [c.op, c.text, c.final])).toEqual([["send", "ab", true]]);
  });
});

/** A journal that records what the reply reported, as the outbox would. */
function journal(messageIds: Array<string | undefined> = []): ReplyJournal & { created: Array<[number, string]> } {
  const created: Array<[number, string]> = [];
  return { key: "telegram:1", messageIds, created, messageCreated: (index, id) => void created.push([index, id]) };
}

describe("StreamingReply with a journal (the outbox)", () => {
  it("reports the preview's id as soon as the platform returns it, and each final part's id", async () => {
    const t = new FakeTransport();
    const j = journal();
    const r = reply(t, { maxLength: 20, journal: j });
    r.textDelta("first words");
    await vi.advanceTimersByTimeAsync(10);
    expect(j.created).toEqual([[0, "m1"]]);
    await r.finish("one two three four five six seven eight");
    expect(j.created).toEqual([[0, "m1"], [1, "m2"]]);
    expect(t.sends().map((c) => c.id)).toEqual(["m1", "m2"]);
  });

  it("a reply resumed after a restart leaves the recorded preview as it is until its final text replaces it, and never sends a new message", async () => {
    const t = new FakeTransport();
    const j = journal(["p7"]);
    const r = reply(t, { journal: j });
    r.toolStarted("exec", "ls");
    r.textDelta("The new");
    await vi.advanceTimersByTimeAsync(5_000);
    await r.finish("The new answer.");
    // What the preview showed before the crash may be a complete answer: no half-written
    // preview of the new run overwrites it.
    expect(t.calls.map((c) => c.op !== "typing" && [c.op, "id" in c ? c.id : "", c.text, c.final])).toEqual([
      ["edit", "p7", "The new answer.", true],
    ]);
    expect(t.sends()).toEqual([]);
    expect(j.created).toEqual([]);
  });

  it("delivering a recorded final again edits every recorded part instead of sending it twice", async () => {
    const t = new FakeTransport();
    const text = "one two three four five six seven eight";
    const parts = splitMessage(text, 20);
    expect(parts).toHaveLength(2);
    await reply(t, { maxLength: 20, journal: journal(["p1", "p2"]) }).finish(text);
    expect(t.calls.map((c) => c.op !== "typing" && [c.op, "id" in c ? c.id : "", c.text])).toEqual([
      ["edit", "p1", parts[0]],
      ["edit", "p2", parts[1]],
    ]);
  });

  it("deletes a recorded preview that cannot be edited any more and sends the answer anew", async () => {
    const deleted: string[] = [];
    const t = Object.assign(new FakeTransport(), { delete: async (id: string) => void deleted.push(id) });
    t.failEdit = (id) => id === "p7";
    const j = journal(["p7"]);
    await reply(t, { journal: j }).finish("Fresh answer.");
    expect(deleted).toEqual(["p7"]);
    expect(t.sends().map((c) => [c.text, c.final])).toEqual([["Fresh answer.", true]]);
    expect(j.created).toEqual([[0, "m1"]]);
  });
});

describe("StreamingReply across a crash", () => {
  it("with a placeholder, the preview is created neutral and shows the answer only once its id was recorded", async () => {
    const t = new FakeTransport();
    const j = journal();
    const shownBeforeRecorded: string[] = [];
    const recording: ReplyJournal = { ...j, messageCreated: (i, id) => j.messageCreated(i, id) };
    const r = reply(t, { journal: recording, previewPlaceholder: "…" });
    r.textDelta("Half of an ans");
    await vi.advanceTimersByTimeAsync(10);
    for (const c of t.calls) if (c.op !== "typing" && j.created.length === 0) shownBeforeRecorded.push(c.text);
    expect(t.sends().map((s) => s.text)).toEqual(["…"]);
    expect(j.created).toEqual([[0, t.sends()[0]!.id]]);
    // The answer follows at once, not a throttle interval later.
    expect(t.edits().map((e) => e.text)).toEqual(["Half of an ans"]);
    await r.finish("Half of an answer.");
    expect(t.edits().at(-1)).toMatchObject({ text: "Half of an answer.", final: true });
    expect(shownBeforeRecorded.every((s) => s === "…")).toBe(true);
  });

  it("once the run's text is complete, no preview goes out: the complete answer is first shown by the final", async () => {
    const t = new FakeTransport();
    const r = reply(t);
    r.textDelta("The first part");
    await vi.advanceTimersByTimeAsync(10);
    r.textDelta(" and the end.");
    r.textComplete();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(t.calls.filter((c) => c.op !== "typing").map((c) => c.text)).toEqual(["The first part"]);
    await r.finish("The first part and the end.");
    expect(t.calls.filter((c) => c.op !== "typing").map((c) => [c.text, c.final])).toEqual([
      ["The first part", false],
      ["The first part and the end.", true],
    ]);
  });
});
