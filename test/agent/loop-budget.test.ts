// The agent loop asks the budget before each model call (RunSpec.reserve): a refusal ends the run
// with one sentence, status over_budget, and what the run did so far stays recorded; a hold is
// settled after every call, answered or failed, and a refused call never reaches the model.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ModelRequest } from "../../src/agent/providers/model.ts";
import type { Reservation } from "../../src/agent/paid-call.ts";
import { defineTool } from "../../src/agent/tool.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
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

const step = defineTool({ name: "step", description: "one step", input: z.object({ n: z.number() }), readOnly: true, execute: async ({ n }) => ({ content: `step ${n} done` }) });

/** Allows `calls` model calls, then refuses; counts what is held. */
function budgetOf(calls: number) {
  const asked: ModelRequest[] = [];
  let held = 0;
  let settled = 0;
  const reserve = (req: ModelRequest): Reservation => {
    asked.push(req);
    if (asked.length > calls) return { type: "refused", reason: "today's budget for this chat is spent" };
    held++;
    return { type: "reserved", hold: { extend: () => null, settle: () => void (held--, settled++) } };
  };
  return { reserve, asked, held: () => held, settled: () => settled };
}

describe("the agent loop and the budget", () => {
  it("asks before every model call; the call that does not fit ends the run with one sentence, and the steps before it stay recorded", async () => {
    h = loopHarness(fake, [step], { scope: "shared", sharedAllow: ["step"] });
    fake.setDefault({ type: "respond", fn: (req) => toolCall("step", { n: req.body.messages.length }) });
    const b = budgetOf(3);
    const result = await h.run("do many steps", { reserve: b.reserve });
    expect(result.status).toBe("over_budget");
    expect(result.text).toBe("I stopped here: today's budget for this chat is spent.");
    expect(fake.requests).toHaveLength(3);
    expect(b.asked).toHaveLength(4);
    expect(b.held()).toBe(0);
    expect(b.settled()).toBe(3);
    expect(h.recorded.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "assistant", "tool_result", "assistant", "tool_result"]);
    expect(h.recorded.filter((m) => m.role === "tool_result").map((m) => m.role === "tool_result" && m.content)).toEqual(["step 1 done", "step 3 done", "step 5 done"]);
    const notices = h.events.filter((e) => e.type === "text_delta" && e.notice);
    expect(notices).toEqual([{ type: "text_delta", text: "I stopped here: today's budget for this chat is spent.", notice: true }]);
    expect(h.events.at(-1)).toMatchObject({ type: "run_end", status: "over_budget", turns: 4 });
  });

  it("the model's words before the stop are kept, the sentence after them", async () => {
    h = loopHarness(fake, [step]);
    fake.enqueue({ type: "message", blocks: [{ text: "Working on it." }, { tool: "step", input: { n: 1 } }] });
    const result = await h.run("go", { reserve: budgetOf(1).reserve });
    expect(result.text).toBe("Working on it.\n\nI stopped here: today's budget for this chat is spent.");
  });

  it("a failed call is settled too, and the run ends as the failure says", async () => {
    h = loopHarness(fake, [step]);
    fake.enqueue({ type: "http_error", status: 400, message: "bad" });
    const b = budgetOf(5);
    const result = await h.run("go", { reserve: b.reserve });
    expect(result.status).toBe("error");
    expect(b.held()).toBe(0);
    expect(b.settled()).toBe(1);
  });

  it("sends the request as the reservation sized it; an answer cut at that length says the budget left no more room", async () => {
    h = loopHarness(fake, [step]);
    fake.enqueue(text("A long answer that", { stopReason: "max_tokens" }));
    const reserve = (req: ModelRequest): Reservation => ({ type: "reserved", request: { ...req, maxTokens: 500 }, hold: { extend: () => null, settle: () => {} } });
    const result = await h.run("go", { reserve });
    expect(fake.requests[0]!.body.max_tokens).toBe(500);
    expect(result.text).toBe("A long answer that\n\n(The answer was cut off at the length the budget left room for.)");
  });

  it("without a budget every call is made", async () => {
    h = loopHarness(fake, [step]);
    fake.enqueue(toolCall("step", { n: 1 }), text("Done."));
    expect((await h.run("go")).text).toBe("Done.");
  });
});
