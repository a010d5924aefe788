// A genuinely full disk (a 2 MB tmpfs): records are never glued, no temp file is left behind,
// the user is told the disk is full, and the message is answered once there is space again.
// Skipped where the sandbox refuses the mount; test/state/storage.test.ts covers the temp-file
// cleanup there with /dev/full.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Transcript } from "../../src/agent/transcript.ts";
import { silentLogger } from "../../src/process/log.ts";
import { appendRecord, writeFileAtomic } from "../../src/state/storage.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTestGateway } from "../support/test-gateway.ts";
import { mountTmpfs, type Tmpfs } from "../support/tmpfs.ts";

const fs: Tmpfs | null = mountTmpfs(2);
afterAll(() => fs?.unmount());

/** Every file below `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<{ isFile(): boolean; parentPath: string; name: string }>)
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe.runIf(fs !== null)("a full disk (2 MB tmpfs)", () => {
  it("a failed append leaves no partial record, and the next append after freeing space is clean", () => {
    const dir = join(fs!.dir, "append");
    mkdirSync(dir);
    const path = join(dir, "t.jsonl");
    appendRecord(path, '{"n":1}\n');
    writeFileSync(join(dir, "index.json"), "old");
    const filler = fs!.fill();
    // Bigger than any slack left in the file's last page: the write fails part way.
    const big = `${JSON.stringify({ n: 2, pad: "x".repeat(64 * 1024) })}\n`;
    expect(() => appendRecord(path, big)).toThrow(/ENOSPC/);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n');
    // An atomic write on the full disk fails too, and leaves no temp file beside the target.
    expect(() => writeFileAtomic(join(dir, "index.json"), "y".repeat(64 * 1024))).toThrow(/ENOSPC/);
    expect(readdirSync(dir).sort()).toEqual(["index.json", "t.jsonl"]);
    expect(readFileSync(join(dir, "index.json"), "utf8")).toBe("old");

    rmSync(filler);
    appendRecord(path, '{"n":3}\n');
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":3}\n');
  });

  describe("in a gateway", () => {
    let fake: FakeModel;
    beforeAll(async () => {
      fake = await startFakeModel();
      return () => fake.close();
    });

    it("tells the user the disk is full, keeps the message, and answers it once there is space", async () => {
      const home = join(fs!.dir, "home");
      mkdirSync(join(home, "sessions"), { recursive: true });
      // The transcript fills its pages exactly, so its next record needs a page the full disk
      // does not have, while the inbox (rewritten small at start) still has room in its page.
      const header = JSON.stringify({ type: "session", version: 1, key: "main", ts: 1 });
      writeFileSync(join(home, "sessions", "main.jsonl"), `${header}${" ".repeat(4095 - header.length)}\n`);
      writeFileSync(join(home, "inbox.jsonl"), `${JSON.stringify({ type: "seen", id: "telegram:old" })}\n`);

      const first = await startTestGateway(fake.url, { home, memory: false, config: { timezone: "UTC", heartbeat: { every: "0" } } });
      const filler = fs!.fill();
      const id = first.channel.say({ chat: "1", type: "dm", sender: "1", text: "hello on a full disk" });
      await waitFor("the disk-full reply", () => first.channel.replies.has(id), 15_000);
      expect(first.channel.replies.get(id)).toEqual(["Hearth's disk is full; your message is kept and will be answered when there is space."]);
      expect(fake.requests).toHaveLength(0);
      first.gateway.context.sessions.flush(); // fails on the full disk: logged, and no temp file stays
      await first.stop();
      expect(filesUnder(home).filter((f) => f.includes(".tmp-"))).toEqual([]);
      expect(readFileSync(join(home, "sessions", "main.jsonl"), "utf8")).toBe(`${header}${" ".repeat(4095 - header.length)}\n`);

      // Space returns; the next start answers the message that was kept.
      rmSync(filler);
      fake.enqueue(text("Answered now that there is space."));
      const second = await startTestGateway(fake.url, { home, memory: false, config: { timezone: "UTC", heartbeat: { every: "0" } } });
      try {
        await waitFor("the kept message to be answered", () => second.channel.replies.has(id), 15_000);
        expect(second.channel.replies.get(id)).toEqual(["Answered now that there is space."]);
        expect(fake.requests).toHaveLength(1);
        expect(JSON.stringify(fake.requests[0]!.body.messages)).toContain("hello on a full disk");
        const lines = readFileSync(join(home, "sessions", "main.jsonl"), "utf8").trimEnd().split("\n");
        const records = lines.map((l) => JSON.parse(l) as { type: string; message?: { role: string; text?: string } });
        expect(records.map((r) => (r.type === "message" ? `${r.type}:${r.message!.role}` : r.type))).toEqual(["session", "message:user", "message:assistant", "run"]);
        expect(Transcript.open(join(home, "sessions", "main.jsonl"), "main", silentLogger).messages()).toHaveLength(2);
      } finally {
        await second.stop();
      }
      expect(filesUnder(home).filter((f) => f.includes(".tmp-"))).toEqual([]);
    });

    it("without a restart, the kept message is answered once the disk has space again", async () => {
      const home = join(fs!.dir, "home3");
      mkdirSync(join(home, "sessions"), { recursive: true });
      const header = JSON.stringify({ type: "session", version: 1, key: "main", ts: 1 });
      writeFileSync(join(home, "sessions", "main.jsonl"), `${header}${" ".repeat(4095 - header.length)}\n`);
      writeFileSync(join(home, "inbox.jsonl"), `${JSON.stringify({ type: "seen", id: "telegram:old" })}\n`);
      const gw = await startTestGateway(fake.url, { home, memory: false, config: { timezone: "UTC", heartbeat: { every: "0" } } });
      const requestsBefore = fake.requests.length;
      try {
        const filler = fs!.fill();
        const id = gw.channel.say({ chat: "1", type: "dm", sender: "1", text: "hello while full" });
        await waitFor("the disk-full reply", () => gw.channel.replies.has(id), 15_000);
        fake.enqueue(text("Answered without a restart."));
        rmSync(filler);
        await waitFor("the kept message to be answered", () => gw.channel.replies.get(id)!.length === 2, 15_000);
        expect(gw.channel.replies.get(id)).toEqual(["Hearth's disk is full; your message is kept and will be answered when there is space.", "Answered without a restart."]);
        expect(fake.requests).toHaveLength(requestsBefore + 1);
        const inbox = readFileSync(join(home, "inbox.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string });
        // The attempt that hit the full disk never reached the model: only the one that answered counts.
        expect(inbox.map((r) => r.type)).toEqual(["seen", "accepted", "started", "done"]);
      } finally {
        await gw.stop();
      }
    });

    it("a message that cannot even be accepted is answered at once: not saved, send it again", async () => {
      const home = join(fs!.dir, "home2");
      mkdirSync(home);
      // The inbox as its start-up rewrite leaves it: exactly one full page, so any append needs a new one.
      const seen = `${JSON.stringify({ type: "seen", id: `telegram:${"x".repeat(4096 - 24 - 9)}` })}\n`;
      expect(seen.length).toBe(4096);
      writeFileSync(join(home, "inbox.jsonl"), seen);
      const gw = await startTestGateway(fake.url, { home, memory: false, config: { timezone: "UTC", heartbeat: { every: "0" } } });
      const filler = fs!.fill();
      const requestsBefore = fake.requests.length;
      try {
        expect(readFileSync(join(home, "inbox.jsonl"), "utf8")).toBe(seen);
        const id = gw.channel.say({ chat: "1", type: "dm", sender: "1", text: "hello again" });
        await waitFor("the reply", () => gw.channel.replies.has(id), 15_000);
        expect(gw.channel.replies.get(id)).toEqual(["Hearth's disk is full, so this message could not be saved. Please send it again once there is space."]);
        expect(readFileSync(join(home, "inbox.jsonl"), "utf8")).toBe(seen);
      } finally {
        rmSync(filler);
        await gw.stop();
      }
      expect(fake.requests).toHaveLength(requestsBefore);
    });
  });
});

describe("an inbox that cannot record a reply as done (disk full)", () => {
  it("is logged, the lanes go on answering, and the message stays open for the next start", async () => {
    const fake = await startFakeModel();
    const gw = await startTestGateway(fake.url, { memory: false, config: { timezone: "UTC", heartbeat: { every: "0" } } });
    const inbox = join(gw.home, "inbox.jsonl");
    try {
      // While the first message runs, every write to the inbox starts failing with ENOSPC.
      fake.enqueue(
        {
          type: "respond",
          fn: () => {
            renameSync(inbox, `${inbox}.real`);
            symlinkSync("/dev/full", inbox);
            return text("First answer.");
          },
        },
        text("Second answer."),
      );
      const first = gw.channel.say({ chat: "1", type: "dm", sender: "1", text: "first" });
      await waitFor("the first answer", () => gw.channel.replies.has(first), 15_000);
      expect(gw.channel.replies.get(first)).toEqual(["First answer."]);
      rmSync(inbox);
      renameSync(`${inbox}.real`, inbox);
      const second = gw.channel.say({ chat: "1", type: "dm", sender: "1", text: "second" });
      await waitFor("the second answer", () => gw.channel.replies.has(second), 15_000);
      expect(gw.channel.replies.get(second)).toEqual(["Second answer."]);
      const records = readFileSync(inbox, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string; id?: string; entry?: { id: string } });
      expect(records.map((r) => `${r.type} ${r.id ?? r.entry?.id}`)).toEqual([
        `accepted telegram:${first}`,
        `started telegram:${first}`,
        `accepted telegram:${second}`,
        `started telegram:${second}`,
        `done telegram:${second}`,
      ]);
    } finally {
      await gw.stop();
      await fake.close();
    }
  });
});
