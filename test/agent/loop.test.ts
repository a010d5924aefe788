import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SteeringQueue } from "../../src/agent/steering.ts";
import { defineTool } from "../../src/agent/tool.ts";
import { SKIPPED_FOR_STEER } from "../../src/agent/tool-runner.ts";
import { createWorkspaceTools } from "../../src/agent/tools/index.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { loopHarness, type Harness } from "../support/loop-harness.ts";

let fake: FakeModel;
let h: Harness;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  h?.cleanup();
  await fake.close();
});

const workspaceTools = () => createWorkspaceTools({ execTimeoutMs: 120_000 });
const resultsOf = (i: number) => lastUserContent(fake.requests[i]!).filter((b) => b.type === "tool_result");

/** A tool that waits until released; records when it ran. */
function gateTool(name: string, readOnly: boolean, log: string[]) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const tool = defineTool({
    name,
    description: `test tool ${name}`,
    input: z.object({ n: z.number().optional() }),
    readOnly,
    async execute() {
      log.push(`${name}:start`);
      await gate;
      log.push(`${name}:end`);
      return { content: `${name} done` };
    },
  });
  return { tool, release };
}

describe("agent loop", () => {
  it("completes a model → exec → model round trip", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.enqueue(toolCall("exec", { command: "echo hearth-42" }), text("The command printed hearth-42."));
    const result = await h.run("run it");
    expect(result.status).toBe("completed");
    expect(result.text).toBe("The command printed hearth-42.");
    expect(resultsOf(1)[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1" });
    expect(JSON.stringify(resultsOf(1))).toContain("hearth-42");
    expect(h.recorded.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    expect(h.events.filter((e) => e.type === "tool_start")).toMatchObject([{ name: "exec", summary: "echo hearth-42" }]);
  });

  it("sends tool schemas generated from zod, without $schema", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.enqueue(text("hi"));
    await h.run("hi");
    const tools = fake.requests[0]!.body.tools as Array<{ name: string; input_schema: Record<string, unknown> }>;
    expect(tools.map((t) => t.name)).toEqual(["exec", "read", "write", "edit"]);
    expect(tools[0]!.input_schema).toMatchObject({ type: "object", required: ["command"] });
    expect(JSON.stringify(tools)).not.toContain("$schema");
  });

  it("answers an unknown tool with an error result the model can act on", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.enqueue(toolCall("teleport", { to: "mars" }), text("Sorry."));
    await h.run("go");
    expect(resultsOf(1)[0]).toMatchObject({ is_error: true });
    expect(String(resultsOf(1)[0]!.content)).toMatch(/Unknown tool "teleport".*exec, read, write, edit/);
  });

  it("answers invalid tool input with the validation problem", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.enqueue(toolCall("exec", { cmd: 42 }), text("Oops."));
    await h.run("go");
    expect(resultsOf(1)[0]).toMatchObject({ is_error: true });
    expect(String(resultsOf(1)[0]!.content)).toMatch(/Invalid input for exec[\s\S]*command/);
  });

  it("turns a throwing tool into an error result", async () => {
    const boom = defineTool({ name: "boom", description: "x", input: z.object({}), readOnly: false, execute: async () => { throw new Error("kaput"); } });
    h = loopHarness(fake, [boom]);
    fake.enqueue(toolCall("boom", {}), text("It failed."));
    const result = await h.run("go");
    expect(result.status).toBe("completed");
    expect(resultsOf(1)[0]).toMatchObject({ is_error: true, content: "boom failed: kaput" });
  });

  it("truncates long tool output to 30,000 characters, keeping head and tail", async () => {
    const big = defineTool({ name: "big", description: "x", input: z.object({}), readOnly: true, execute: async () => ({ content: `START${"x".repeat(200_000)}END` }) });
    h = loopHarness(fake, [big]);
    fake.enqueue(toolCall("big", {}), text("ok"));
    await h.run("go");
    const content = String(resultsOf(1)[0]!.content);
    expect(content.length).toBeLessThanOrEqual(30_000);
    expect(content.startsWith("START")).toBe(true);
    expect(content.endsWith("END")).toBe(true);
    expect(content).toContain("characters cut");
  });

  it("warns on the third identical call and ends the run on the fourth", async () => {
    h = loopHarness(fake, workspaceTools());
    for (let i = 0; i < 4; i++) fake.enqueue(toolCall("exec", { command: "echo same" }));
    fake.enqueue(text("never requested"));
    const result = await h.run("loop");
    expect(fake.requests).toHaveLength(4);
    expect(String(resultsOf(3)[0]!.content)).toMatch(/third identical exec call/);
    expect(result.status).toBe("doom_loop");
    expect(result.text).toMatch(/kept repeating the same step \(exec/);
    expect(fake.pending()).toBe(1);
  });

  it("stops at maxTurns with a note to the user", async () => {
    h = loopHarness(fake, workspaceTools());
    for (let i = 0; i < 3; i++) fake.enqueue(toolCall("exec", { command: `echo ${i}` }));
    const result = await h.run("go", { maxTurns: 3 });
    expect(result.status).toBe("max_turns");
    expect(fake.requests).toHaveLength(3);
    expect(result.text).toMatch(/stopped after 3 steps.*agent\.maxTurns/);
  });

  it("caps maxTurns at 100", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.setDefault({ type: "respond", fn: (req) => toolCall("exec", { command: `echo ${req.body.messages.length}` }) });
    const result = await h.run("go", { maxTurns: 10_000 });
    expect(result.status).toBe("max_turns");
    expect(fake.requests).toHaveLength(100);
  });

  it("steers between tool calls: unstarted calls are skipped and the message joins the next request", async () => {
    const log: string[] = [];
    const slow = gateTool("slow", false, log);
    const other = gateTool("other", false, log);
    other.release();
    h = loopHarness(fake, [slow.tool, other.tool]);
    const steering = new SteeringQueue();
    fake.enqueue(
      { type: "message", blocks: [{ tool: "slow", input: {} }, { tool: "other", input: {} }] },
      text("Both noted."),
    );
    const running = h.run("do both", { steering });
    await fake.waitForRequests(1);
    while (!log.includes("slow:start")) await sleep(5);
    steering.push({ role: "user", kind: "steer", text: "actually, also say hello", ts: Date.now() });
    slow.release();
    const result = await running;

    expect(log).toEqual(["slow:start", "slow:end"]); // "other" never started
    const content = lastUserContent(fake.requests[1]!);
    expect(content.map((b) => b.type)).toEqual(["tool_result", "tool_result", "text"]);
    expect(content[0]).toMatchObject({ content: "slow done" });
    expect(content[1]).toMatchObject({ content: SKIPPED_FOR_STEER, is_error: true });
    expect(content[2]).toMatchObject({ text: "actually, also say hello" });
    expect(result.status).toBe("completed");
    expect(fake.requests).toHaveLength(2);
    expect(h.events.some((e) => e.type === "steered")).toBe(true);
  });

  it("makes one more model call when a message arrives while the final answer streams", async () => {
    h = loopHarness(fake, []);
    const steering = new SteeringQueue();
    fake.enqueue(text("Here is my answer to the first question.", { chunkSize: 5, chunkDelayMs: 20 }), text("And to the second."));
    const running = h.run("first", { steering });
    await fake.waitForRequests(1);
    steering.push({ role: "user", kind: "steer", text: "second question", ts: Date.now() });
    const result = await running;
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(lastUserContent(fake.requests[1]!))).toContain("second question");
    expect(result.text).toBe("Here is my answer to the first question.\n\nAnd to the second.");
  });

  it("runs consecutive read-only tools together and others one at a time", async () => {
    const log: string[] = [];
    const a = gateTool("ra", true, log);
    const b = gateTool("rb", true, log);
    const w = gateTool("w", false, log);
    h = loopHarness(fake, [a.tool, b.tool, w.tool]);
    fake.enqueue({ type: "message", blocks: [{ tool: "ra", input: {} }, { tool: "rb", input: {} }, { tool: "w", input: {} }] }, text("done"));
    const running = h.run("go");
    while (!(log.includes("ra:start") && log.includes("rb:start"))) await sleep(5);
    expect(log).not.toContain("w:start");
    a.release();
    b.release();
    w.release();
    await running;
    expect(log.indexOf("w:start")).toBeGreaterThan(Math.max(log.indexOf("ra:end"), log.indexOf("rb:end")));
    expect(resultsOf(1).map((r) => r.content)).toEqual(["ra done", "rb done", "w done"]);
  });

  it("nudges an answer that announces an action without taking it, at most twice", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.enqueue(text("Let me check the disk."), text("Let me check the disk now."), text("Let me check it."), text("unused"));
    const result = await h.run("disk?");
    expect(fake.requests).toHaveLength(3);
    expect(JSON.stringify(lastUserContent(fake.requests[1]!))).toContain("You announced an action but called no tool");
    expect(result.status).toBe("completed");
  });

  it("aborts while streaming and records the partial answer as interrupted", async () => {
    h = loopHarness(fake, []);
    const ac = new AbortController();
    fake.enqueue(text("word ".repeat(100), { chunkSize: 5, chunkDelayMs: 20 }));
    const running = h.run("talk", { signal: ac.signal });
    while (!h.events.some((e) => e.type === "text_delta")) await sleep(5);
    ac.abort();
    const result = await running;
    expect(result.status).toBe("aborted");
    const last = h.recorded.at(-1)!;
    expect(last).toMatchObject({ role: "assistant", stop: "aborted" });
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.text.length).toBeLessThan(500);
  });

  it("aborts a running exec and kills its process group", async () => {
    h = loopHarness(fake, workspaceTools());
    const ac = new AbortController();
    fake.enqueue(toolCall("exec", { command: "sleep 30 & echo $! > child.pid; wait" }), text("unused"));
    const running = h.run("sleep", { signal: ac.signal });
    const pidFile = join(h.workspace, "child.pid");
    for (;;) {
      try {
        if (readFileSync(pidFile, "utf8").trim()) break;
      } catch {}
      await sleep(10);
    }
    const pid = Number(readFileSync(pidFile, "utf8"));
    const started = Date.now();
    ac.abort();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.status).toBe("aborted");
    expect(h.recorded.at(-1)).toMatchObject({ role: "tool_result", isError: true });
    expect(String((h.recorded.at(-1) as { content: string }).content)).toContain("[killed: aborted]");
    expect(processGone(pid)).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it("refuses a main-only tool in shared scope and does not offer it", async () => {
    h = loopHarness(fake, workspaceTools(), { scope: "shared" });
    fake.enqueue(toolCall("exec", { command: "cat USER.md" }), text("I can't."));
    await h.run("read it");
    expect(fake.requests[0]!.body.tools).toBeUndefined();
    expect(resultsOf(1)[0]).toMatchObject({ is_error: true });
    expect(String(resultsOf(1)[0]!.content)).toMatch(/^Refused: exec is only available in the owner's private chat/);
  });

  it("ends with a clear note when the model rejects the key: what to fix, not 'try again'", async () => {
    h = loopHarness(fake, []);
    fake.enqueue({ type: "http_error", status: 401 });
    const result = await h.run("hi");
    expect(result.status).toBe("error");
    expect(result.error?.kind).toBe("auth");
    expect(result.text).toBe("The model API rejected the API key (HTTP 401). Set a valid key in ANTHROPIC_API_KEY (in Hearth's .env, or the environment), then restart Hearth.");
    expect(h.recorded).toHaveLength(1);
  });

  it("tells a shared chat that the model failed without naming keys or configuration", async () => {
    h = loopHarness(fake, [], { scope: "shared" });
    fake.enqueue({ type: "http_error", status: 403 });
    const result = await h.run("hi");
    expect(result.status).toBe("error");
    expect(result.text).toBe("Sorry, I can't answer right now because of a problem on my side. My owner can see what went wrong in Hearth's log.");
  });

  it("keeps configuration keys out of a shared chat's limit notices", async () => {
    h = loopHarness(fake, workspaceTools(), { scope: "shared", sharedAllow: ["exec"] });
    fake.setDefault(toolCall("exec", { command: "true" }));
    const limited = await h.run("go", { maxTurns: 2 });
    expect(limited.text).toBe('I stopped after 2 steps, my limit for one answer. Say "continue" if I should go on.');
    fake.setDefault(null);
    fake.enqueue(text("Cut off mid", { stopReason: "max_tokens" }));
    const cut = await h.run("long");
    expect(cut.text).toBe("Cut off mid\n\n(The answer was cut off at the length limit.)");
  });

  it("says so when the model returns an empty answer, instead of sending nothing", async () => {
    h = loopHarness(fake, []);
    fake.enqueue({ type: "message", blocks: [] }, { type: "message", blocks: [{ text: "  \n" }] });
    for (const input of ["hi", "again"]) {
      const result = await h.run(input);
      expect(result.status).toBe("error");
      expect(result.text).toBe("The model returned an empty answer. Please try again or rephrase your message.");
    }
    const streamed = h.events.filter((e) => e.type === "run_end").map((e) => (e.type === "run_end" ? e.text : ""));
    expect(streamed).toEqual(Array(2).fill("The model returned an empty answer. Please try again or rephrase your message."));
  });

  it("streams exactly the final text", async () => {
    h = loopHarness(fake, workspaceTools());
    fake.enqueue(
      { type: "message", blocks: [{ text: "Checking." }, { tool: "exec", input: { command: "true" } }], chunkSize: 3 },
      text("All good.", { chunkSize: 2 }),
    );
    const result = await h.run("check");
    const streamed = h.events.reduce((acc, e) => (e.type === "text_delta" ? acc + e.text : e.type === "text_reset" ? e.text : acc), "");
    expect(streamed).toBe(result.text);
    expect(result.text).toBe("Checking.\n\nAll good.");
  });
});

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  // A killed child may linger as a zombie until a slow PID 1 reaps it.
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}
