// The memory history through a real gateway: a hand edit and a memory_write become two commits
// with the right authors, /undo in the owner's chat puts back the exact bytes, a shared chat
// cannot use it, and `hearth memory log|diff|restore` read and use the same history.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMemory } from "../../src/cli/memory.ts";
import { GitStore } from "../../src/memory/history/git-store.ts";
import { localDate } from "../../src/process/time.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let t: TestGateway;
let store: GitStore;

beforeAll(async () => {
  fake = await startFakeModel();
  t = await startTestGateway(fake.url, { config: { timezone: "UTC" }, telegram: { groups: { policy: "allowlist", allow: ["-100"], requireMention: false } } });
  await waitFor("the history's first commit", async () => (store = (await GitStore.open(join(t.home, "history.git"), { create: false }))!) !== null && store.head() !== null);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

async function ask(chat: string, type: "dm" | "group", sender: string, message: string): Promise<string> {
  // The owner writes in the DM: another person's message would be outside content (its memory_write asked).
  const id = t.channel.say({ chat, type, sender, text: message, isOwner: type === "dm" });
  await waitFor(`the answer to "${message}"`, () => t.channel.replies.has(id));
  return t.channel.replies.get(id)!.at(-1)!;
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const sink = (f: (s: string) => void) => new Writable({ write: (c, _e, cb) => (f(String(c)), cb()) });
  const code = await runMemory(t.home, args, { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)) });
  return { code, out, err };
}

describe("memory history", () => {
  it("a hand edit and a memory_write are two commits with their authors; /undo restores the exact bytes", async () => {
    const ws = t.config.workspace;
    const memory = t.gateway.context.runtime.memory!;
    const seenBefore = memory.lastChangeAt();
    writeFileSync(join(ws, "USER.md"), "# User\nName: Ada\n");
    await waitFor("the watcher to see the hand edit", () => memory.lastChangeAt() > seenBefore);
    const memoryBefore = readFileSync(join(ws, "MEMORY.md"));

    fake.enqueue(toolCall("memory_write", { text: "Ada has a cat named Pixel.", target: "memory" }), text("Saved."));
    expect(await ask("1", "dm", "1", "remember that I have a cat named Pixel")).toBe("Saved.");
    expect(readFileSync(join(ws, "MEMORY.md"), "utf8")).toContain("Ada has a cat named Pixel.");

    expect(await ask("-100", "group", "7", "/undo")).toBe("Only the owner can undo memory changes, in their own chat.");
    const undone = await ask("1", "dm", "1", "/undo");
    expect(undone).toMatch(/^Undone: MEMORY\.md is back as it was before my change [0-9a-f]{7}\.$/u);
    expect(readFileSync(join(ws, "MEMORY.md")).equals(memoryBefore)).toBe(true);

    const log = await cli(["log"]);
    expect(log.code).toBe(0);
    const today = localDate(Date.now(), "UTC");
    const subjects = log.out.trimEnd().split("\n").map((l) => l.replace(/^[0-9a-f]{7} {2}\d{4}-\d{2}-\d{2} \d{2}:\d{2} {2}/u, ""));
    const hearthRev = undone.match(/[0-9a-f]{7}/u)![0];
    expect(subjects).toEqual([`owner: /undo of ${hearthRev} (MEMORY.md)`, `Hearth: MEMORY.md, memory/${today}.md`, "owner: USER.md", expect.stringMatching(/^Hearth: the memory history starts \(\d+ files\)$/u)]);
    expect((await cli(["log", "USER.md"])).out.trimEnd().split("\n")).toHaveLength(2);

    const diff = await cli(["diff", hearthRev]);
    expect(diff.out).toContain("--- a/MEMORY.md\n+++ b/MEMORY.md\n");
    expect(diff.out).toMatch(/\n\+.*Ada has a cat named Pixel\.\n/u);

    const restored = await cli(["restore", "MEMORY.md", "--at", hearthRev]);
    expect(restored.out).toMatch(new RegExp(`^Restored MEMORY\\.md as it was at ${hearthRev} \\(\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}\\)\\.\n$`, "u"));
    expect(readFileSync(join(ws, "MEMORY.md"), "utf8")).toContain("Ada has a cat named Pixel.");
    // Not recorded yet (the daemon's batch is a minute): diff without a revision shows it.
    const pending = await cli(["diff"]);
    expect(pending.out).toMatch(/^--- a\/MEMORY\.md\n\+\+\+ b\/MEMORY\.md\n@@ [^\n]+ @@\n(?:[ +][^\n]*\n)*\+.*Ada has a cat named Pixel\.\n/u);
    // A path outside the workspace is a usage error (exit 2), before anything is opened.
    await expect(cli(["restore", "../config.json", "--at", hearthRev])).rejects.toThrow("../config.json: the memory history records the workspace's markdown files");
  }, 60_000);
});
