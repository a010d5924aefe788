// A server's question as the owner sees it and what the server gets back: answers checked
// against the schema, choices by number or name, defaults on "-", decline, cancel, silence.
import { describe, expect, it } from "vitest";
import { elicitForm, elicitUrl } from "../../../src/agent/mcp/elicitation.ts";

/** Answers from a script; records what was asked. null: no answer in time. */
function scripted(answers: Array<string | null>) {
  const asked: string[] = [];
  return { asked, ask: async (text: string) => (asked.push(text), answers.shift() ?? null) };
}

const schema = {
  type: "object",
  properties: {
    color: { type: "string", title: "Color", enum: ["red", "green", "blue"], default: "green" },
    count: { type: "integer", title: "How many", minimum: 1, maximum: 5 },
    note: { type: "string", title: "Note" },
    tags: { type: "array", title: "Tags", items: { enum: ["a", "b", "c"] }, maxItems: 2 },
  },
  required: ["count"],
};

describe("a form question", () => {
  it("takes a choice by number, a default on '-', re-asks a number out of range, leaves an optional field out", async () => {
    const s = scripted(["-", "9", "3", "-", "a, c"]);
    expect(await elicitForm("srv", { message: "Set it up.", requestedSchema: schema }, s.ask)).toEqual({ action: "accept", content: { color: "green", count: 3, tags: ["a", "c"] } });
    expect(s.asked).toEqual([
      'The MCP server "srv" asks: Set it up.\n(Answer "decline" to refuse, "cancel" to stop.)\nColor\n(one of: 1. red, 2. green, 3. blue; "-" takes "green")',
      "How many\n(an integer from 1 to 5, required)",
      "That does not fit: answer a number from 1 to 5.\nHow many\n(an integer from 1 to 5, required)",
      'Note\n(text; "-" leaves it out)',
      'Tags\n(one or more of (comma-separated): 1. a, 2. b, 3. c; "-" leaves it out)',
    ]);
  });

  it("declines, cancels, declines on silence, and cancels after three answers that do not fit", async () => {
    expect(await elicitForm("srv", { message: "x", requestedSchema: schema }, scripted(["2", "decline"]).ask)).toEqual({ action: "decline" });
    expect(await elicitForm("srv", { message: "x", requestedSchema: schema }, scripted(["Cancel"]).ask)).toEqual({ action: "cancel" });
    expect(await elicitForm("srv", { message: "x", requestedSchema: schema }, scripted([null]).ask)).toEqual({ action: "decline" });
    expect(await elicitForm("srv", { message: "x", requestedSchema: schema }, scripted(["1", "0", "six", "99"]).ask)).toEqual({ action: "cancel" });
  });

  it("a link to open is accepted with yes", async () => {
    const s = scripted(["yes"]);
    expect(await elicitUrl("srv", { message: "Authorize the payment.", url: "https://pay.example/x" }, s.ask)).toEqual({ action: "accept", content: {} });
    expect(s.asked).toEqual(['The MCP server "srv" asks you to open this link: Authorize the payment.\nhttps://pay.example/x\nAnswer "yes" once you opened it, or "decline".']);
  });
});
