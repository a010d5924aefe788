// Signal's reply transport: edits are `send` with the message's first timestamp, previews are
// few and spaced further apart each time (Signal shows only ten edits), the final text always edits.
import { describe, expect, it } from "vitest";
import { MAX_PREVIEW_EDITS, signalTransport } from "../../../src/channels/signal/reply.ts";

describe("Signal reply transport", () => {
  it("a message's preview edits: the first at once, then 2 s, 4 s, 8 s … apart, at most a few; the final edit always goes", async () => {
    let now = 1_000_000;
    const calls: Array<{ method: string; params: Record<string, unknown> }> = [];
    const t = signalTransport({
      rpc: async (method, params) => {
        calls.push({ method, params });
        return { timestamp: 500 + calls.length };
      },
      where: { groupId: "G" },
      quote: { quoteTimestamp: 42, quoteAuthor: "+4915111111111" },
      clock: () => now,
    });
    const id = await t.send("…", { final: false });
    expect(id).toBe("501");
    expect(calls[0]).toEqual({ method: "send", params: { groupId: "G", message: "…", quoteTimestamp: 42, quoteAuthor: "+4915111111111" } });
    // A preview edit every 500 ms for two minutes.
    for (let i = 0; i < 240; i++) {
      await t.edit(id, `preview ${i}`, { final: false });
      now += 500;
    }
    await t.edit(id, "the answer", { final: true });
    const edits = calls.slice(1);
    expect(edits.map((c) => c.params.editTimestamp)).toEqual(Array(MAX_PREVIEW_EDITS + 1).fill(501));
    expect(edits.map((c) => c.params.message)).toEqual(["preview 0", "preview 4", "preview 12", "preview 28", "preview 60", "the answer"]);
    expect(edits.every((c) => c.params.quoteTimestamp === undefined)).toBe(true);
    // A second message quotes nothing.
    await t.send("part two", { final: true });
    expect(calls.at(-1)!.params).toEqual({ groupId: "G", message: "part two" });
  });
});
