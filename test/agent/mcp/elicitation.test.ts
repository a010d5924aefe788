// A server's question as the owner sees it and what the server gets back: answers checked
// against the schema, choices by number or name, defaults on "-", decline, cancel, silence.
import { describe, expect, it } from "vitest";
import { elicitForm, elicitUrl } from "../../../src/agent/mcp/elicitation.ts";
import type { AskChoice } from "../../../src/agent/tool.ts";

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

  it("offers buttons for a yes/no and a choice among a few, whose answers are taken like typed ones; Decline declines", async () => {
    const offered: Array<AskChoice[] | undefined> = [];
    /** Presses the button labelled `label` of each question in turn (typed text where there is none). */
    const pressing = (labels: string[]) => async (_text: string, choices?: readonly AskChoice[]) => {
      offered.push(choices ? [...choices] : undefined);
      const label = labels.shift()!;
      return choices?.find((c) => c.label === label)?.answer ?? label;
    };
    const form = {
      type: "object",
      properties: {
        size: { type: "string", title: "Size", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
        ok: { type: "boolean", title: "Go ahead?", default: false },
        many: { type: "string", enum: ["1", "2", "3", "4", "5", "6", "7", "8", "9"] },
        tags: { type: "array", items: { enum: ["a", "b"] } },
        sure: { type: "boolean" },
      },
      required: ["size", "many"],
    };
    expect(await elicitForm("srv", { message: "x", requestedSchema: form }, pressing(["Large", "Default", "9", "a,b", "Skip"]))).toEqual({
      action: "accept",
      content: { size: "l", ok: false, many: "9", tags: ["a", "b"] },
    });
    const decline = { label: "Decline", answer: "decline" };
    expect(offered).toEqual([
      [{ label: "Small", answer: "1" }, { label: "Large", answer: "2" }, decline],
      [{ label: "Yes", answer: "yes" }, { label: "No", answer: "no" }, { label: "Default", answer: "-" }, decline],
      undefined,
      undefined,
      [{ label: "Yes", answer: "yes" }, { label: "No", answer: "no" }, { label: "Skip", answer: "-" }, decline],
    ]);
    expect(await elicitForm("srv", { message: "x", requestedSchema: form }, pressing(["Decline"]))).toEqual({ action: "decline" });
    expect(await elicitForm("srv", { message: "Delete it?", requestedSchema: {} }, pressing(["Accept"]))).toEqual({ action: "accept", content: {} });
  });

  it("a link to open is accepted with yes", async () => {
    const s = scripted(["yes"]);
    expect(await elicitUrl("srv", { message: "Authorize the payment.", url: "https://pay.example/x" }, s.ask)).toEqual({ action: "accept", content: {} });
    expect(s.asked).toEqual(['The MCP server "srv" asks you to open this link: Authorize the payment.\nhttps://pay.example/x\nAnswer "yes" once you opened it, or "decline".']);
  });
});
