import { describe, expect, it } from "vitest";
import type { OutgoingCheck } from "../../../src/agent/tools/send-file.ts";
import type { ReplySink } from "../../../src/channels/channel.ts";
import { holdUntil } from "../../../src/gateway/delivery/heard-line.ts";
import { planImages, withMarkdownImages, type PlannedImage } from "../../../src/gateway/delivery/reply-files.ts";
import { silentLogger } from "../../../src/process/log.ts";

/** A sink that keeps what a person would see: the text so far, and every call in order. */
function recordingSink() {
  const calls: string[] = [];
  let shown = "";
  const seen: string[] = [];
  const sink: ReplySink = {
    textDelta: (t) => {
      shown += t;
      seen.push(shown);
      calls.push(`delta:${t}`);
    },
    textReset: (t) => {
      shown = t;
      seen.push(shown);
      calls.push(`reset:${t}`);
    },
    toolStarted: (n) => void calls.push(`tool:${n}`),
    toolFinished: (n) => void calls.push(`done:${n}`),
    finish: async (t) => void calls.push(`finish:${t}`),
    fail: async (m) => void calls.push(`fail:${m}`),
  };
  return { sink, calls, seen };
}

const files: Record<string, OutgoingCheck> = {
  "chart.png": { ok: true, relative: "chart.png", file: { file: "/ws/chart.png", name: "chart.png", mime: "image/png", asPhoto: true } },
  "r.pdf": { ok: true, relative: "r.pdf", file: { file: "/ws/r.pdf", name: "r.pdf", mime: "application/pdf", asPhoto: false } },
};
const check = (p: string): OutgoingCheck => files[p] ?? { ok: false, reason: "no such file in the workspace" };

describe("markdown images in a reply", () => {
  it("streamed character by character: no preview ever shows a reference that will be sent; the final text is the same rule; pictures after the text, once each", async () => {
    const { sink, calls, seen } = recordingSink();
    const sent: PlannedImage[] = [];
    const reply = withMarkdownImages(sink, { check, send: async (f) => void sent.push(f), log: silentLogger });
    const answer = "Chart:\n\n![Sales](chart.png)\n\nReport ![](r.pdf) and ![x](missing.png), again ![Sales](chart.png).";
    for (const ch of answer) reply.textDelta(ch);
    await reply.finish(answer);
    for (const s of seen) expect(s).not.toMatch(/chart\.png|r\.pdf|!\[Sales|!\[\]/);
    expect(seen.at(-1)).toBe("Chart:\n\nReport and ![x](missing.png), again.");
    expect(calls.at(-1)).toBe("finish:Chart:\n\nReport and ![x](missing.png), again.");
    expect(sent).toEqual([
      { target: "chart.png", file: "/ws/chart.png", name: "chart.png", mime: "image/png", asPhoto: true, caption: "Sales" },
      { target: "r.pdf", file: "/ws/r.pdf", name: "r.pdf", mime: "application/pdf", asPhoto: false },
    ]);
  });

  it("a picture the platform refuses is logged; the reply still finishes and the next picture goes", async () => {
    const { sink, calls } = recordingSink();
    const tried: string[] = [];
    const reply = withMarkdownImages(sink, {
      check,
      send: async (f) => {
        tried.push(f.name);
        if (f.name === "chart.png") throw new Error("400 Bad Request");
      },
      log: silentLogger,
    });
    await reply.finish("![a](chart.png) ![b](r.pdf)");
    expect(calls).toEqual(["finish:🖼 a\n🖼 b"]);
    expect(tried).toEqual(["chart.png", "r.pdf"]);
  });

  it("text without images passes through untouched, deltas as deltas", async () => {
    const { sink, calls } = recordingSink();
    const reply = withMarkdownImages(sink, { check, send: async () => {}, log: silentLogger });
    reply.textDelta("Hello ");
    reply.textDelta("there");
    await reply.finish("Hello there");
    expect(calls).toEqual(["delta:Hello ", "delta:there", "finish:Hello there"]);
    expect(planImages("a ![u](https://x/y.png)", check, false)).toEqual({ text: "a ![u](https://x/y.png)", images: [], kept: [{ target: "https://x/y.png", reason: "a URL (never fetched)" }] });
  });
});

describe("holdUntil", () => {
  it("passes nothing on before `ready` settles, then everything in order", async () => {
    const { sink, calls } = recordingSink();
    let go = () => {};
    const ready = new Promise<void>((resolve) => (go = resolve));
    const held = holdUntil(ready, sink);
    held.textDelta("a");
    held.toolStarted("exec", "ls");
    const finished = held.finish("ab");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual([]);
    go();
    await finished;
    expect(calls).toEqual(["delta:a", "tool:exec", "finish:ab"]);
  });
});
