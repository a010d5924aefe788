import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Message } from "../../src/agent/messages.ts";
import { Transcript } from "../../src/agent/transcript.ts";
import { silentLogger } from "../../src/process/log.ts";

const user = (text: string, entry?: string): Message => ({ role: "user", kind: "message", text, ts: 1, ...(entry ? { entry } : {}) });
const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
const answer = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }], stop: "end_turn", model: "m", usage, ts: 1 });

it("a withdrawn entry leaves the model's view with what its cut-off run added; a note takes its place when given; the file keeps everything", () => {
  const path = join(mkdtempSync(join(tmpdir(), "hearth-t-")), "s.jsonl");
  const t = Transcript.open(path, "s", silentLogger);
  t.append({ type: "message", message: user("q1", "e1") });
  t.append({ type: "message", message: answer("a1") });
  t.append({ type: "message", message: user("poison", "e2") });
  t.append({ type: "message", message: { role: "assistant", content: [{ type: "tool_call", id: "c", name: "exec", input: {} }], stop: "tool_use", model: "m", usage, ts: 1 } });
  t.append({ type: "message", message: user("q3", "e3") });
  t.append({ type: "withdrawn", entry: "e3", ts: 2 });
  expect(t.messages().map((m) => (m.role === "user" ? m.text : m.role))).toEqual(["q1", "assistant", "poison", "assistant"]);
  // Retried: its turn comes back, once.
  t.append({ type: "message", message: user("q3", "e3") });
  t.append({ type: "message", message: user("poison", "e2") });
  t.append({ type: "withdrawn", entry: "e2", note: "(given up)", ts: 3 });
  const view = ["q1", "assistant", "(given up)", "q3"];
  expect(t.messages().map((m) => (m.role === "user" ? m.text : m.role))).toEqual(view);
  // The same view after a restart, from the records.
  expect(Transcript.open(path, "s", silentLogger).messages().map((m) => (m.role === "user" ? m.text : m.role))).toEqual(view);
});
