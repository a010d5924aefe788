import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/agent/messages.ts";
import { Transcript } from "../../src/agent/transcript.ts";
import { createLogger, silentLogger } from "../../src/process/log.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-transcript-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const msg = (text: string): Message => ({ role: "user", kind: "message", text, ts: 1 });

describe("Transcript", () => {
  it("appends one JSON line per record and reloads the same view", () => {
    const t = Transcript.open(join(dir, "main.jsonl"), "main", silentLogger);
    t.append({ type: "message", message: msg("one") });
    t.append({ type: "message", message: msg("two") });
    const lines = readFileSync(t.path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(3); // session header + 2
    expect(Transcript.open(join(dir, "main.jsonl"), "main", silentLogger).messages()).toEqual([msg("one"), msg("two")]);
  });

  it("skips a torn last line, reports it, and keeps later appends on clean lines", () => {
    const t = Transcript.open(join(dir, "main.jsonl"), "main", silentLogger);
    t.append({ type: "message", message: msg("kept") });
    appendFileSync(t.path, '{"type":"message","message":{"role":"user","kind":"mess'); // crash mid-write
    const logged: string[] = [];
    const log = createLogger({ level: "warn", sink: { write: (l) => logged.push(l) } });

    const reopened = Transcript.open(join(dir, "main.jsonl"), "main", log);
    expect(reopened.messages()).toEqual([msg("kept")]);
    expect(logged.join("")).toContain("transcript.torn_line");

    reopened.append({ type: "message", message: msg("after") });
    expect(Transcript.open(join(dir, "main.jsonl"), "main", silentLogger).messages()).toEqual([msg("kept"), msg("after")]);
    for (const line of readFileSync(t.path, "utf8").trimEnd().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("reports and skips a corrupt line in the middle", () => {
    const path = join(dir, "main.jsonl");
    writeFileSync(path, `${JSON.stringify({ type: "message", message: msg("a") })}\nnot json\n${JSON.stringify({ type: "message", message: msg("b") })}\n`);
    const logged: string[] = [];
    const t = Transcript.open(join(dir, "main.jsonl"), "main", createLogger({ level: "warn", sink: { write: (l) => logged.push(l) } }));
    expect(t.messages()).toEqual([msg("a"), msg("b")]);
    const events = logged.map((l) => JSON.parse(l) as { event: string; file: string; lines: number[] });
    expect(events.map((e) => [e.event, e.file, e.lines])).toEqual([["state.records_skipped", path, [2]]]);
  });

  it("skips records of the wrong shape (a null message) instead of feeding them to every later run", () => {
    const path = join(dir, "main.jsonl");
    const good = (text: string) => JSON.stringify({ type: "message", message: msg(text) });
    writeFileSync(
      path,
      [good("a"), '{"type":"message","message":null}', "null", '{"type":"message","message":{"role":"assistant","content":"x"}}', '{"type":"weird"}', good("b")].join("\n") + "\n",
    );
    const logged: string[] = [];
    const t = Transcript.open(path, "main", createLogger({ level: "warn", sink: { write: (l) => logged.push(l) } }));
    expect(t.messages()).toEqual([msg("a"), msg("b")]);
    const events = logged.map((l) => JSON.parse(l) as { event: string; file: string; lines: number[]; problems: string[] });
    expect(events.map((e) => [e.event, e.file, e.lines])).toEqual([["state.records_skipped", path, [2, 3, 4, 5]]]);
    expect(events[0]!.problems[0]).toMatch(/^line 2: /);
    // The damaged lines stay on disk untouched; new records follow on their own lines.
    t.append({ type: "message", message: msg("c") });
    expect(readFileSync(path, "utf8").split("\n")[1]).toBe('{"type":"message","message":null}');
    expect(Transcript.open(path, "main", silentLogger).messages()).toEqual([msg("a"), msg("b"), msg("c")]);
  });

  it("starts the model's view fresh after an epoch record but keeps the history on disk", () => {
    const t = Transcript.open(join(dir, "main.jsonl"), "main", silentLogger);
    t.append({ type: "message", message: msg("old") });
    t.append({ type: "epoch", reason: "new", ts: 2 });
    t.append({ type: "message", message: msg("new") });
    expect(Transcript.open(join(dir, "main.jsonl"), "main", silentLogger).messages()).toEqual([msg("new")]);
    expect(readFileSync(t.path, "utf8")).toContain('"old"');
  });

  it("a transcript that cannot be read at all (a folder in its place) is set aside and a fresh one started", () => {
    const path = join(dir, "main.jsonl");
    mkdirSync(path);
    const t = Transcript.open(path, "main", silentLogger);
    t.append({ type: "message", message: msg("fresh") });
    expect(Transcript.open(path, "main", silentLogger).messages()).toEqual([msg("fresh")]);
    expect(readdirSync(dir).filter((n) => n.startsWith("main.jsonl.damaged-"))).toHaveLength(1);
  });
});
