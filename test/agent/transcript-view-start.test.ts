// A transcript loads from where the model's view begins (its last compaction or epoch record),
// found by reading the file backwards: what comes before is never parsed, and the view is the
// same as a load from line one.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/agent/messages.ts";
import { Transcript, viewStart } from "../../src/agent/transcript.ts";
import { createLogger, silentLogger } from "../../src/process/log.ts";

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-view-"));
  file = join(dir, "main.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const msg = (text: string, ts = 1): Message => ({ role: "user", kind: "message", text, ts });
const line = (r: unknown) => `${JSON.stringify(r)}\n`;
const message = (text: string) => line({ type: "message", message: msg(text) });

function logged() {
  const lines: string[] = [];
  return { log: createLogger({ level: "warn", sink: { write: (l) => lines.push(l) } }), lines };
}

describe("Transcript.open from the last compaction", () => {
  it("never parses what precedes the last compaction (a damaged early line goes unnoticed), and the view is right", () => {
    let body = line({ type: "session", version: 1, key: "main", ts: 1 }) + "{not json\n";
    for (let i = 0; i < 3000; i++) body += message(`old ${i} ${"x".repeat(100)}`);
    body += line({ type: "compaction", reason: "threshold", messages: [msg("summary")], summarized: true, tokensBefore: 9, tokensAfter: 1, ts: 2 });
    body += message("after 1") + message("after 2");
    writeFileSync(file, body);
    const { log, lines } = logged();
    expect(Transcript.open(file, "main", log).messages()).toEqual([msg("summary"), msg("after 1"), msg("after 2")]);
    expect(lines).toEqual([]);
    expect(viewStart(file)).toBe(body.indexOf('{"type":"compaction"'));
  });

  it("an epoch record starts the view too; a later compaction wins over an earlier epoch", () => {
    writeFileSync(file, message("a") + line({ type: "epoch", reason: "/new", ts: 1 }) + message("b"));
    expect(Transcript.open(file, "main", silentLogger).messages()).toEqual([msg("b")]);
    appendFileSync(file, line({ type: "compaction", reason: "command", messages: [msg("s")], summarized: true, tokensBefore: 2, tokensAfter: 1, ts: 3 }) + message("c"));
    expect(Transcript.open(file, "main", silentLogger).messages()).toEqual([msg("s"), msg("c")]);
  });

  it("a damaged compaction line is not taken for the start: the load falls back to the records before it", () => {
    writeFileSync(file, message("a") + line({ type: "epoch", reason: "/new", ts: 1 }) + message("b") + '{"type":"compaction","reason":"x","messages":"not a list"}\n' + message("c"));
    expect(Transcript.open(file, "main", silentLogger).messages()).toEqual([msg("b"), msg("c")]);
  });

  it("finds a compaction record longer than the 64 KB read block, and one on the first line", () => {
    const big = Array.from({ length: 400 }, (_, i) => msg(`kept ${i} ${"y".repeat(300)}`));
    writeFileSync(file, line({ type: "compaction", reason: "threshold", messages: big, summarized: true, tokensBefore: 9, tokensAfter: 1, ts: 2 }) + message("z"));
    expect(viewStart(file)).toBe(0);
    expect(Transcript.open(file, "main", silentLogger).messages()).toEqual([...big, msg("z")]);
    writeFileSync(file, message("first") + line({ type: "compaction", reason: "threshold", messages: big, summarized: true, tokensBefore: 9, tokensAfter: 1, ts: 2 }) + message("z"));
    expect(viewStart(file)).toBe(message("first").length);
    expect(Transcript.open(file, "main", silentLogger).messages()).toEqual([...big, msg("z")]);
  });
});
