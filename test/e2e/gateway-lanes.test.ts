// The daemon's lanes end to end: real `hearth start`, real `hearth chat -m` clients, fake model.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliResult } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { lastUserContent, requestText, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon | undefined;
let home: string;
beforeEach(async () => {
  fake = await startFakeModel();
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

async function start(queueMode?: string): Promise<Daemon> {
  home = makeHome(queueMode ? { agent: { queueMode } } : {});
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  return daemon;
}

const chat = (d: Daemon, message: string): Promise<CliResult> => d.hearth(["chat", "-m", message]);
const transcriptLines = (h: string) =>
  readFileSync(join(h, "sessions", "main.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; status?: string; message?: { role: string; stop?: string; content?: unknown } });

describe("lanes (daemon e2e)", () => {
  it("steer: a message sent during a slow tool joins the run; both clients print the same answer", async () => {
    const d = await start();
    // The tool runs for 2 s: B's client (a new process) arrives while it runs.
    fake.enqueue(toolCall("exec", { command: "sleep 2; echo slow-tool-done" }), text("Done with A, and noted B."));
    const a = chat(d, "A: run the slow thing");
    await fake.waitForRequests(1);
    const b = chat(d, "B: also remember milk");
    const [ra, rb] = await Promise.all([a, b]);

    expect(fake.requests).toHaveLength(2);
    const second = lastUserContent(fake.requests[1]!);
    expect(second.map((x) => x.type)).toEqual(["tool_result", "text"]);
    expect(String(second[0]!.content)).toContain("slow-tool-done");
    expect(String(second[1]!.text)).toContain("B: also remember milk");
    expect(ra.code).toBe(0);
    expect(rb.code).toBe(0);
    expect(ra.stdout.trim()).toBe("Done with A, and noted B.");
    expect(rb.stdout.trim()).toBe("Done with A, and noted B.");
  });

  it("followup: a message during a run gets its own run afterwards", async () => {
    const d = await start("followup");
    fake.enqueue(text("Answer to A.", { chunkSize: 2, chunkDelayMs: 60 }), text("Answer to B."));
    const a = chat(d, "question A");
    await fake.waitForRequests(1);
    const b = chat(d, "question B");
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.stdout.trim()).toBe("Answer to A.");
    expect(rb.stdout.trim()).toBe("Answer to B.");
    expect(fake.requests).toHaveLength(2);
    expect(requestText(fake.requests[0]!)).not.toContain("question B");
    expect(requestText(fake.requests[1]!)).toContain("Answer to A.");
  });

  it("collect: messages during a run are merged into one follow-up run", async () => {
    const d = await start("collect");
    // A streams for about 2.5 s: long enough for both B and C to arrive during it.
    fake.enqueue(text("Answer to A, slowly.", { chunkSize: 1, chunkDelayMs: 130 }), text("Answer to B and C."));
    const a = chat(d, "question A");
    await fake.waitForRequests(1);
    const b = chat(d, "question B");
    const c = chat(d, "question C");
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect(fake.requests).toHaveLength(2);
    const merged = requestText(fake.requests[1]!);
    expect(merged).toContain("question B");
    expect(merged).toContain("question C");
    expect(ra.stdout.trim()).toBe("Answer to A, slowly.");
    expect(rb.stdout.trim()).toBe("Answer to B and C.");
    expect(rc.stdout.trim()).toBe("Answer to B and C.");
  });

  it("interrupt: a new message aborts the run, which stays in the transcript marked interrupted", async () => {
    const d = await start("interrupt");
    fake.enqueue(text("A long answer to A that goes on and on. ".repeat(10), { chunkSize: 4, chunkDelayMs: 40 }), text("Answer to B."));
    const a = chat(d, "question A");
    await fake.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 300));
    const rb = await chat(d, "question B");
    const ra = await a;
    expect(rb.stdout.trim()).toBe("Answer to B.");
    expect(ra.stdout).toContain("(Interrupted by your new message.)");
    expect(ra.code).toBe(130);
    const lines = transcriptLines(home);
    expect(lines.some((l) => l.type === "message" && l.message?.role === "assistant" && l.message.stop === "aborted")).toBe(true);
    expect(lines.filter((l) => l.type === "run").map((l) => l.status)).toEqual(["aborted", "completed"]);
    expect(requestText(fake.requests[1]!)).toContain("[interrupted]");
  });

  it("/stop ends a run within a second and the transcript marks it interrupted", async () => {
    const d = await start();
    fake.enqueue(toolCall("exec", { command: "sleep 30" }), text("never"));
    let aExitedAt = 0;
    const a = chat(d, "run something slow").then((r) => ((aExitedAt = Date.now()), r));
    await fake.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 300));
    const stopSentAt = Date.now();
    const stop = await chat(d, "/stop");
    const ra = await a;
    expect(stop.stdout.trim()).toBe("Stopped.");
    expect(aExitedAt - stopSentAt).toBeLessThan(1000 + 500); // + the stop command's own process start
    expect(ra.code).toBe(130);
    expect(fake.requests).toHaveLength(1);
    const lines = transcriptLines(home);
    expect(lines.at(-1)).toMatchObject({ type: "run", status: "aborted" });
    expect(JSON.stringify(lines.at(-2))).toContain("[killed: aborted]");
  });
});
