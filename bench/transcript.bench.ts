// Loading a long session's transcript: 10,000 messages with tool calls and results.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../src/agent/messages.ts";
import { Transcript } from "../src/agent/transcript.ts";
import { silentLogger } from "../src/process/log.ts";
import { measure, percentile, round, type Figure } from "./harness.ts";

export async function transcriptBench(): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-transcript-"));
  try {
    const path = join(dir, "main.jsonl");
    const usage = { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 9000, cacheCreationTokens: 100 };
    const lines: string[] = [JSON.stringify({ type: "session", version: 1, key: "main", ts: 0 })];
    for (let i = 0; i < 10_000; i++) {
      const ts = 1_700_000_000_000 + i * 1000;
      let m: Message;
      switch (i % 4) {
        case 0:
          m = { role: "user", kind: "message", text: `[2026-11-22 10:00 · telegram · Owner]\nPlease check item ${i} and tell me what you find.`, ts };
          break;
        case 1:
          m = { role: "assistant", content: [{ type: "tool_call", id: `toolu_${i}`, name: "exec", input: { command: `grep -n item-${i} notes.md` } }], stop: "tool_use", model: "m", usage, ts };
          break;
        case 2:
          m = { role: "tool_result", toolCallId: `toolu_${i - 1}`, toolName: "exec", content: `notes.md:${i}: item-${i} is fine\n`.repeat(8), isError: false, ts };
          break;
        default:
          m = { role: "assistant", content: [{ type: "text", text: `Item ${i} looks fine: nothing to do. `.repeat(4) }], stop: "end_turn", model: "m", usage, ts };
      }
      lines.push(JSON.stringify({ type: "message", message: m }));
    }
    writeFileSync(path, `${lines.join("\n")}\n`);
    const times = await measure(20, () => Transcript.open(path, "main", silentLogger));
    return [{ name: "transcript load, 10,000 messages (p50)", value: round(percentile(times, 50)), unit: "ms", target: 100 }];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
