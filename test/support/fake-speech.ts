// An OpenAI-compatible speech server for tests (`POST /v1/audio/speech`, JSON) on a free
// 127.0.0.1 port: records what it was asked to say and answers with audio bytes made from the
// text (so a test can tell parts apart), an HTTP error, or never.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer } from "node:stream/consumers";

export interface SpeechRequest {
  authorization: string | undefined;
  model: string;
  voice: string;
  input: string;
  format: string;
}

export type SpeechAnswer = "audio" | { status: number } | "hang";

export interface FakeSpeech {
  /** Give this as voice.tts.baseUrl. */
  readonly baseUrl: string;
  readonly requests: SpeechRequest[];
  /** Answers, in order; when none is left: "audio". */
  enqueue(answer: SpeechAnswer): void;
  close(): Promise<void>;
}

/** The bytes the fake answers for `input`: an OGG header and the text, so each part is recognisable. */
export const fakeAudio = (input: string): Uint8Array => new Uint8Array(Buffer.concat([Buffer.from("OggS"), Buffer.from(input, "utf8")]));

export async function startFakeSpeech(): Promise<FakeSpeech> {
  const requests: SpeechRequest[] = [];
  const answers: SpeechAnswer[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = JSON.parse((await buffer(req)).toString("utf8")) as Record<string, unknown>;
      requests.push({ authorization: req.headers.authorization, model: String(body.model), voice: String(body.voice), input: String(body.input), format: String(body.response_format) });
      const answer = answers.shift() ?? "audio";
      if (answer === "hang") return;
      if (typeof answer === "object") {
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "scripted failure" } }));
        return;
      }
      const audio = fakeAudio(String(body.input));
      res.writeHead(200, { "content-type": "audio/ogg", "content-length": String(audio.length) });
      res.end(audio);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (a) => void answers.push(a),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
