// An OpenAI-compatible transcription server for tests (`POST /v1/audio/transcriptions`,
// multipart) on a free 127.0.0.1 port: records what it received and answers with a scripted
// text, an HTTP error, or never (a timeout).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer } from "node:stream/consumers";

export interface TranscriptionRequest {
  path: string;
  authorization: string | undefined;
  model: string;
  language: string | undefined;
  fileName: string;
  file: Uint8Array;
}

/**
 * `delayMs`: the text comes after that long (a slow service); `fields`: more of the answer's JSON
 * (`duration` as verbose_json gives it, `usage: { type: "duration", seconds }` as OpenAI's json does).
 */
export type TranscriptionAnswer = { text: string; delayMs?: number; fields?: Record<string, unknown> } | { status: number } | "hang";

export interface FakeTranscription {
  /** Give this as media.transcription.baseUrl. */
  readonly baseUrl: string;
  readonly requests: TranscriptionRequest[];
  /** Answers, in order; when none is left: `{ text: "hello" }`. */
  enqueue(answer: TranscriptionAnswer): void;
  close(): Promise<void>;
}

export async function startFakeTranscription(): Promise<FakeTranscription> {
  const requests: TranscriptionRequest[] = [];
  const answers: TranscriptionAnswer[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const form = await readForm(req);
      const file = form.get("file");
      requests.push({
        path: req.url ?? "",
        authorization: req.headers.authorization,
        model: String(form.get("model") ?? ""),
        language: form.get("language") === null ? undefined : String(form.get("language")),
        fileName: file instanceof File ? file.name : "",
        file: file instanceof File ? new Uint8Array(await file.arrayBuffer()) : new Uint8Array(),
      });
      const answer = answers.shift() ?? { text: "hello" };
      if (answer === "hang") return;
      if ("status" in answer) {
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "scripted failure" } }));
        return;
      }
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...answer.fields, text: answer.text }));
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

async function readForm(req: IncomingMessage): Promise<FormData> {
  const body = await buffer(req);
  return new Request("http://x/", { method: "POST", headers: { "content-type": req.headers["content-type"] ?? "" }, body }).formData();
}
