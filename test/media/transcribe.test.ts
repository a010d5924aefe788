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

  it("a 500, a server that never answers, and an unreachable server are failures with a reason, never throws", async () => {
    stt.enqueue({ status: 500 });
    expect(await transcribe({ baseUrl: stt.baseUrl, model: "m" }, audio)).toEqual({ type: "failed", reason: "the service answered HTTP 500" });
    stt.enqueue("hang");
    expect(await transcribe({ baseUrl: stt.baseUrl, model: "m" }, audio, 300)).toEqual({ type: "failed", reason: "no answer within 0.3 s" });
    expect(await transcribe({ baseUrl: "http://127.0.0.1:1/v1", model: "m" }, audio)).toEqual({ type: "failed", reason: "cannot reach http://127.0.0.1:1/v1" });
  });
});
