// A Slack message event as Hearth reads it: the chat (a DM, a channel, a thread), whether the
// bot is addressed, and Slack's markup turned back into words.
import { describe, expect, it } from "vitest";
import { normalizeSlackMessage, readableText } from "../../../src/channels/slack/inbound.ts";

const bot = { id: "UBOT", name: "Hearth" };
const rules = { bot, ownerIds: ["UOWNER"], namePattern: null };
const names = (id: string) => ({ UANN: "ann" })[id] ?? id;

describe("Slack inbound messages", () => {
  it("a DM is addressed; its id is the channel and ts, the dedupe key of a redelivered event", () => {
    const r = normalizeSlackMessage({ type: "message", channel: "D1", channel_type: "im", user: "UOWNER", text: "hi", ts: "1700000000.000100" }, rules, names);
    expect(r.kind === "message" && r.message).toMatchObject({ id: "D1:1700000000.000100", chat: { id: "D1", type: "dm", members: ["UOWNER"] }, sender: { id: "UOWNER", isOwner: true }, addressed: true, raw: { channel: "D1", ts: "1700000000.000100" } });
  });

  it("in a channel only a mention addresses the bot; a thread reply is in its thread", () => {
    const plain = normalizeSlackMessage({ type: "message", channel: "C1", channel_type: "channel", user: "UANN", text: "lunch?", ts: "2.0" }, rules, names);
    expect(plain.kind === "message" && plain.message.addressed).toBe(false);
    const r = normalizeSlackMessage({ type: "message", channel: "C1", channel_type: "channel", user: "UANN", text: "<@UBOT> what now?", ts: "3.0", thread_ts: "1.0" }, rules, names);
    expect(r.kind === "message" && r.message).toMatchObject({ chat: { id: "C1", type: "group", threadId: "1.0" }, text: "what now?", addressed: true, raw: { channel: "C1", ts: "3.0", threadTs: "1.0" } });
  });

  it("edits, bot messages and the bot's own are not a person's message", () => {
    expect(normalizeSlackMessage({ type: "message", subtype: "message_changed", channel: "D1", ts: "1.0" }, rules, names).kind).toBe("ignored");
    expect(normalizeSlackMessage({ type: "message", channel: "D1", user: "UX", bot_id: "B1", text: "x", ts: "1.0" }, rules, names).kind).toBe("ignored");
    expect(normalizeSlackMessage({ type: "message", channel: "D1", user: "UBOT", text: "x", ts: "1.0" }, rules, names).kind).toBe("ignored");
  });

  it("Slack's markup becomes words", () => {
    expect(readableText("<@UBOT> ask <@UANN> about <https://example.com|the page> in <#C1|general> &amp; <!here> 1 &lt; 2", bot, names)).toBe("ask @ann about the page (https://example.com) in #general & @here 1 < 2");
  });
});
