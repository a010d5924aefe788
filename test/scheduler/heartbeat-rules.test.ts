// When a heartbeat may skip its model call, and what the heartbeat sees of main's conversation.
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/agent/messages.ts";
import { DIGEST_MAX_CHARS, mainDigest } from "../../src/scheduler/heartbeat-digest.ts";
import { nothingCanHaveChanged, timeDependentLine } from "../../src/scheduler/heartbeat-rules.ts";
import { checklistOf } from "../../src/scheduler/heartbeat.ts";

describe("time-dependent checklist items", () => {
  it.each([
    "- Remind me to stretch.",
    "- Water the plants every Monday.",
    "- Call mum at 18:30.",
    "- Take the pills at 9am.",
    "- Pay rent before 2026-12-01.",
    "- Anything due?",
    "- Deadlines in MEMORY.md within the next few hours.",
    "- Follow-ups the owner asked for today.",
    "- Backup check: 0 3 * * 1",
    "- Birthday on 24.12.",
  ])("%j depends on the time", (line) => expect(timeDependentLine(`# Heartbeat\n${line}`)).toBe(line));

  it.each(["- Is the disk of the NAS still mentioned as full in MEMORY.md?", "- Check the notes for open questions."])("%j does not", (line) => {
    expect(timeDependentLine(line)).toBeNull();
  });

  it("finds the default HEARTBEAT.md time-dependent", async () => {
    const { readFileSync } = await import("node:fs");
    const template = checklistOf(readFileSync(new URL("../../workspace/HEARTBEAT.md", import.meta.url), "utf8"))!;
    expect(timeDependentLine(template)).toBe("- Follow-ups the owner asked for today (see today's log) that are now due.");
  });
});

describe("skip rule", () => {
  const timeless = "- Check the notes for open questions.";
  it("skips only after a HEARTBEAT_OK, with a known watcher and no change since", () => {
    expect(nothingCanHaveChanged({ checklist: timeless, lastOkAt: 1000, workspaceChangedAt: 999 })).toBe(true);
    expect(nothingCanHaveChanged({ checklist: timeless, lastOkAt: 1000, workspaceChangedAt: 1000 })).toBe(false);
    expect(nothingCanHaveChanged({ checklist: timeless, lastOkAt: null, workspaceChangedAt: 0 })).toBe(false);
    expect(nothingCanHaveChanged({ checklist: timeless, lastOkAt: 1000, workspaceChangedAt: null })).toBe(false);
    expect(nothingCanHaveChanged({ checklist: "- Remind me of things.", lastOkAt: 1000, workspaceChangedAt: 0 })).toBe(false);
  });
});

describe("digest of main", () => {
  const asked = (t: string): Message => ({ role: "user", kind: "message", text: t, ts: 0 });
  const said = (t: string): Message => ({ role: "assistant", content: [{ type: "text", text: t }], stop: "end_turn", model: "m", usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 }, ts: 0 });

  it("holds the last five exchanges' text, oldest first, without tool traffic", () => {
    const messages: Message[] = [];
    for (let i = 1; i <= 7; i++) {
      messages.push(asked(`q${i}`));
      messages.push({ role: "assistant", content: [{ type: "tool_call", id: `t${i}`, name: "exec", input: { command: "secret-tool-input" } }], stop: "tool_use", model: "m", usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 }, ts: 0 });
      messages.push({ role: "tool_result", toolCallId: `t${i}`, content: "secret-tool-output", isError: false, ts: 0 } as Message);
      messages.push(said(`a${i}`));
    }
    expect(mainDigest(messages)).toBe(["Owner: q3\nHearth: a3", "Owner: q4\nHearth: a4", "Owner: q5\nHearth: a5", "Owner: q6\nHearth: a6", "Owner: q7\nHearth: a7"].join("\n\n"));
    expect(mainDigest([])).toBe("");
  });

  it("stays within about 2,000 tokens however long the messages are", () => {
    const messages: Message[] = [];
    for (let i = 0; i < 20; i++) messages.push(asked("x".repeat(50_000)), said("y".repeat(50_000)));
    const digest = mainDigest(messages);
    expect(digest.length).toBeLessThanOrEqual(DIGEST_MAX_CHARS);
    expect(digest.split("\n\n")).toHaveLength(5);
  });
});
