// An OpenAI-compatible embeddings server for tests (`POST /v1/embeddings`) on a free 127.0.0.1
// port, and the deterministic stand-in it answers with: a hashed bag of words in which the words
// of a synonym group count as one word ("car", "automobile" and "vehicle" share a dimension), so
// a paraphrase lands near its note and keyword search alone does not find it.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer } from "node:stream/consumers";

/** Words that mean the same to the stand-in. */
export const SYNONYMS: string[][] = [
  ["car", "automobile", "vehicle"],
  ["doctor", "physician", "gp"],
  ["dentist", "orthodontist"],
  ["buy", "purchase", "bought", "purchased"],
  ["flat", "apartment"],
  ["holiday", "vacation", "trip"],
  ["film", "movie", "cinema"],
  ["mum", "mother", "mom"],
  ["dad", "father"],
  ["job", "work", "employer"],
  ["sick", "ill", "unwell"],
  ["bike", "bicycle", "cycling"],
  ["money", "cash", "funds"],
  ["fix", "repair", "mend"],
  ["kid", "child", "children", "kids"],
  ["house", "home"],
  ["phone", "mobile", "smartphone"],
  ["plane", "flight", "airline"],
  ["cat", "kitten"],
  ["dog", "puppy"],
  ["garden", "yard"],
  ["shop", "store"],
  ["meal", "dinner", "supper"],
  ["big", "large", "huge"],
  ["begin", "start", "started"],
];

const canonical = new Map<string, string>(SYNONYMS.flatMap((group) => group.map((w) => [w, group[0]!] as const)));

export const STAND_IN_DIMENSIONS = 256;

/** The stand-in embedding of `text`: deterministic, synonym-aware, not normalised. */
export function standInEmbedding(text: string, dims = STAND_IN_DIMENSIONS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (raw.length < 3 && !canonical.has(raw)) continue;
    const word = canonical.get(raw) ?? raw;
    const h = createHash("sha1").update(word).digest();
    v[h.readUInt32BE(0) % dims]! += 1;
  }
  return v;
}

export interface FakeEmbeddings {
  /** Give this as memory.embeddings.baseUrl. */
  readonly baseUrl: string;
  /** Every request's inputs, in order. */
  readonly requests: Array<{ model: string; input: string[]; authorization: string | undefined; at: number }>;
  /** The next `n` requests fail with HTTP 500. */
  failNext(n: number): void;
  close(): Promise<void>;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const requests: FakeEmbeddings["requests"] = [];
  let failing = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const body = JSON.parse((await buffer(req)).toString("utf8")) as { model: string; input: string | string[] };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      requests.push({ model: body.model, input, authorization: req.headers.authorization, at: Date.now() });
      if (failing > 0) {
        failing--;
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "scripted failure" } }));
        return;
      }
      const data = input.map((text, index) => ({ object: "embedding", index, embedding: standInEmbedding(text) }));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data, model: body.model, usage: { prompt_tokens: input.reduce((n, t) => n + Math.ceil(t.length / 4), 0) } }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext: (n) => void (failing = n),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
