import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { transcribe } from "../../src/media/transcribe.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";

let stt: FakeTranscription;
beforeEach(async () => {
  stt = await startFakeTranscription();
});
afterEach(() => stt.close());

const audio = { bytes: new Uint8Array([1, 2, 3]), name: "voice.ogg", mime: "audio/ogg" };

describe("transcribe", () => {
  it("posts the audio as multipart with model and language, and returns the text", async () => {
    stt.enqueue({ text: "  hi there \n" });
    expect(await transcribe({ baseUrl: stt.baseUrl, model: "whisper-large-v3", language: "de" }, audio)).toEqual({ type: "ok", text: "hi there" });
    expect(stt.requests[0]).toMatchObject({ model: "whisper-large-v3", language: "de", authorization: undefined, fileName: "voice.ogg" });
  });

  it("returns the audio length the service measured: OpenAI's json usage, verbose_json's duration, or nothing", async () => {
    stt.enqueue({ text: "a", fields: { usage: { type: "duration", seconds: 7.5 } } });
    stt.enqueue({ text: "b", fields: { duration: 12.25, language: "english" } });
    stt.enqueue({ text: "c", fields: { usage: { type: "tokens", input_tokens: 50, output_tokens: 5 } } });
    stt.enqueue({ text: "d", fields: { duration: "long" } });
    const c = { baseUrl: stt.baseUrl, model: "whisper-1" };
    expect(await transcribe(c, audio)).toEqual({ type: "ok", text: "a", seconds: 7.5 });
    expect(await transcribe(c, audio)).toEqual({ type: "ok", text: "b", seconds: 12.25 });
    expect(await transcribe(c, audio)).toEqual({ type: "ok", text: "c" });
    expect(await transcribe(c, audio)).toEqual({ type: "ok", text: "d" });
  });

  it("a 500, a server that never answers, and an unreachable server are failures with a reason, never throws", async () => {
    stt.enqueue({ status: 500 });
    expect(await transcribe({ baseUrl: stt.baseUrl, model: "m" }, audio)).toEqual({ type: "failed", reason: "the service answered HTTP 500" });
    stt.enqueue("hang");
    expect(await transcribe({ baseUrl: stt.baseUrl, model: "m" }, audio, 300)).toEqual({ type: "failed", reason: "no answer within 0.3 s" });
    expect(await transcribe({ baseUrl: "http://127.0.0.1:1/v1", model: "m" }, audio)).toEqual({ type: "failed", reason: "cannot reach http://127.0.0.1:1/v1" });
  });
});
