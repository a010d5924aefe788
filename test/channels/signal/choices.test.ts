// Signal's questions with choices: the text a person sees, and which reaction, quote or number picks what.
import { describe, expect, it } from "vitest";
import { OpenQuestions, questionText } from "../../../src/channels/signal/choices.ts";
import { reactionToOwn, type SignalEnvelope } from "../../../src/channels/signal/inbound.ts";

const BOT = "+4915100000000";
const OWNER = "+4915111111111";
const rules = { account: BOT, ownerIds: [OWNER], namePattern: null };
const APPROVAL = { key: "ap1", kind: "approval" as const, text: "🔐 Approve this?", choices: [{ id: "once", label: "Allow once" }, { id: "30m", label: "Allow for 30 min" }, { id: "no", label: "Deny" }] };

describe("Signal choices", () => {
  it("the question lists each choice with its number and emoji, then how to answer", () => {
    expect(questionText(APPROVAL)).toBe("🔐 Approve this?\n\n1. ✅ Allow once\n2. ⏳ Allow for 30 min\n3. ❌ Deny\n\nReact with your choice, or reply to this message with its number.");
    expect(questionText({ key: "m", kind: "setting", text: "Model?", choices: [{ id: "a", label: "Fast" }, { id: "b", label: "Deep" }] })).toBe("Model?\n\n1. 1️⃣ Fast\n2. 2️⃣ Deep\n\nReact with your choice, or reply to this message with its number.");
  });

  it("a reaction picks by emoji (with or without the variation selector) on the question it names; settled ones pick nothing", () => {
    const open = new OpenQuestions();
    open.add(BOT, 100, OWNER, APPROVAL);
    open.add(BOT, 200, OWNER, { ...APPROVAL, key: "ap2" });
    expect(open.byReaction(BOT, 100, "✅")).toEqual({ key: "ap1", choiceId: "once" });
    expect(open.byReaction(BOT, 100, "❌\uFE0F")).toEqual({ key: "ap1", choiceId: "no" });
    expect(open.byReaction(BOT, 100, "👍")).toBeNull();
    open.settle(100);
    expect(open.byReaction(BOT, 100, "✅")).toBeNull();
    expect(open.byReaction(BOT, 200, "✅")).toEqual({ key: "ap2", choiceId: "once" });
  });

  it("a number quoting a question answers that one; a bare number only the chat's one open question, else it is asked back", () => {
    const open = new OpenQuestions();
    open.add(BOT, 100, OWNER, APPROVAL);
    const picked = (r: ReturnType<OpenQuestions["byNumber"]>) => (r.type === "press" ? [r.question.key, r.choice.id] : r);
    expect(picked(open.byNumber(OWNER, " 2 "))).toEqual(["ap1", "30m"]);
    open.add(BOT, 200, OWNER, { key: "pair1", kind: "access", text: "🤝 Sam asks to talk", choices: [{ id: "approve", label: "Approve" }, { id: "deny", label: "Deny" }] });
    expect(open.byNumber(OWNER, "1")).toEqual({ type: "refused", text: "Which one? Reply to the question you mean." });
    expect(picked(open.byNumber(OWNER, "1", `${BOT}:100`))).toEqual(["ap1", "once"]);
    expect(picked(open.byNumber(OWNER, "1", `${BOT}:200`))).toEqual(["pair1", "approve"]);
    // A quote of someone else's message at the same moment names no question of Hearth's.
    expect(open.byNumber(OWNER, "1", `${OWNER}:100`)).toEqual({ type: "refused", text: "Which one? Reply to the question you mean." });
    open.settle(100);
    expect(open.byNumber(OWNER, "1", `${BOT}:100`)).toEqual({ type: "refused", text: "This request is no longer open." });
    // The one open question is a pairing request: never settled by a bare number.
    expect(open.byNumber(OWNER, "1")).toEqual({ type: "refused", text: "Reply to the question itself to answer it: who may talk to Hearth is never decided by a bare number." });
    expect(open.byNumber(OWNER, "4")).toEqual({ type: "none" });
    expect(open.byNumber("+4915222222222", "1")).toEqual({ type: "none" });
  });

  it("only a reaction someone added to the bot's own message is read, with whether they are the owner", () => {
    const reaction = (from: string, r: Record<string, unknown>, groupId?: string): SignalEnvelope => ({
      sourceNumber: from,
      sourceName: "Bob",
      timestamp: 5,
      dataMessage: { timestamp: 5, reaction: { emoji: "✅", targetAuthorNumber: BOT, targetSentTimestamp: 100, isRemove: false, ...r }, ...(groupId ? { groupInfo: { groupId } } : {}) },
    });
    expect(reactionToOwn(reaction(OWNER, {}), rules)).toEqual({ emoji: "✅", targetTimestamp: 100, chatId: OWNER, sender: { id: OWNER, name: "Bob", isOwner: true } });
    expect(reactionToOwn(reaction("+4915222222222", {}, "R1JPVVA="), rules)).toMatchObject({ chatId: "R1JPVVA=", sender: { isOwner: false } });
    expect(reactionToOwn(reaction(OWNER, { isRemove: true }), rules)).toBeNull();
    expect(reactionToOwn(reaction(OWNER, { targetAuthorNumber: OWNER }), rules)).toBeNull();
    expect(reactionToOwn({ sourceNumber: OWNER, timestamp: 5, dataMessage: { timestamp: 5, message: "hi" } }, rules)).toBeNull();
  });
});
