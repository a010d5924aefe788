import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SPEECH_CHARS, speakableText, speechParts, synthesize } from "../../src/media/speech.ts";
import { fakeAudio, startFakeSpeech, type FakeSpeech } from "../support/fake-speech.ts";

describe("speakableText", () => {
  it("keeps the words of a markdown answer and drops its marks, link targets, pictures and code blocks", () => {
    const md = [
      "# Plan for **today**",
      "",
      "- Call [mum](https://example.com/mum) at `18:00`",
      "- _Buy_ bread",
      "1. Water the plants",
      "",
      "> a quote",
      "",
      "| day | what |",
      "|---|---|",
      "| Mon | gym |",
      "",
      "```js",
      "console.log(1)",
      "```",
      "![chart](out/chart.png)",
      "---",
      "Done ~~maybe~~.",
    ].join("\n");
    expect(speakableText(md)).toBe("Plan for today\n\nCall mum at 18:00\nBuy bread\nWater the plants\n\na quote\n\nday, what\n\nMon, gym\n\nDone maybe.");
  });

  it("leaves plain text and arithmetic alone", () => {
    expect(speakableText("2 * 3 = 6 and snake_case_name stays.")).toBe("2 * 3 = 6 and snake_case_name stays.");
  });
});

describe("speechParts", () => {
  it("a short text is one part; a long one is cut at paragraphs, then sentences, within the limit", () => {
    expect(speechParts("Hello there.")).toEqual(["Hello there."]);
    const para = `${"word ".repeat(700).trim()}.`; // 3,500 characters
    const parts = speechParts(`${para}\n\n${para}\n\n${para}`);
    expect(parts).toEqual([para, para, para]);
    const sentences = "One sentence here. ".repeat(400).trim();
    for (const p of speechParts(sentences)) {
      expect(p.length).toBeLessThanOrEqual(MAX_SPEECH_CHARS);
      expect(p.endsWith(".")).toBe(true);
    }
    expect(speechParts(sentences).join(" ")).toBe(sentences);
    expect(speechParts("x".repeat(9000)).map((p) => p.length)).toEqual([4096, 4096, 808]);
  });
});

describe("synthesize", () => {
  let tts: FakeSpeech;
  beforeAll(async () => void (tts = await startFakeSpeech()));
  afterAll(() => tts.close());

  it("posts model, voice, input and format and returns the audio; an HTTP error or a dead address is a reason", async () => {
    const r = await synthesize({ baseUrl: tts.baseUrl, model: "tts-1", voice: "alloy", format: "opus", apiKey: "k" }, "Hi.");
    expect(r).toEqual({ type: "ok", bytes: fakeAudio("Hi."), mime: "audio/ogg", ext: "ogg" });
    expect(tts.requests.at(-1)).toEqual({ authorization: "Bearer k", model: "tts-1", voice: "alloy", input: "Hi.", format: "opus" });
    tts.enqueue({ status: 429 });
    expect(await synthesize({ baseUrl: tts.baseUrl, model: "tts-1", voice: "alloy", format: "mp3" }, "Hi.")).toEqual({ type: "failed", reason: "the service answered HTTP 429" });
    expect(tts.requests.at(-1)!.authorization).toBeUndefined();
    tts.enqueue("hang");
    expect(await synthesize({ baseUrl: tts.baseUrl, model: "tts-1", voice: "alloy", format: "opus" }, "Hi.", 300)).toEqual({ type: "failed", reason: "no answer within 0.3 s" });
    expect(await synthesize({ baseUrl: "http://127.0.0.1:1/v1", model: "tts-1", voice: "alloy", format: "opus" }, "Hi.")).toEqual({ type: "failed", reason: "cannot reach http://127.0.0.1:1/v1" });
  });
});
