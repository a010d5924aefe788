// Text → vectors through any OpenAI-compatible `POST <baseUrl>/embeddings` (OpenAI
// text-embedding-3-small, Ollama's nomic-embed-text at http://127.0.0.1:11434/v1, any compatible
// server). Failures are values: search then falls back to keywords alone.

export interface EmbeddingsConfig {
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** Asked of models that can shorten their vectors (text-embedding-3-*). */
  dimensions?: number | undefined;
}

/** `tokens`: what the service says it read (usage.prompt_tokens), else an estimate (4 characters a token). */
export type Embedded = { type: "ok"; vectors: Float32Array[]; tokens: number } | { type: "failed"; reason: string };

export const EMBED_TIMEOUT_MS = 30_000;

export async function embed(c: EmbeddingsConfig, inputs: string[], timeoutMs = EMBED_TIMEOUT_MS): Promise<Embedded> {
  if (inputs.length === 0) return { type: "ok", vectors: [], tokens: 0 };
  let res: Response;
  try {
    res = await fetch(`${c.baseUrl}/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(c.apiKey ? { authorization: `Bearer ${c.apiKey}` } : {}) },
      body: JSON.stringify({ model: c.model, input: inputs, ...(c.dimensions ? { dimensions: c.dimensions } : {}) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return { type: "failed", reason: timedOut ? `no answer within ${timeoutMs / 1000} s` : `cannot reach ${c.baseUrl}` };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { type: "failed", reason: `the service answered HTTP ${res.status}` };
  }
  let body: { data?: unknown; usage?: { prompt_tokens?: unknown } };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    return { type: "failed", reason: "the service's answer was not JSON" };
  }
  const data = Array.isArray(body.data) ? (body.data as Array<{ embedding?: unknown; index?: unknown }>) : [];
  const vectors: Array<Float32Array | undefined> = new Array(inputs.length);
  for (const [i, d] of data.entries()) {
    const at = typeof d.index === "number" ? d.index : i;
    if (!Array.isArray(d.embedding) || at < 0 || at >= inputs.length || !d.embedding.every((x) => typeof x === "number" && Number.isFinite(x))) {
      return { type: "failed", reason: "the service's answer had no usable vectors" };
    }
    vectors[at] = normalized(Float32Array.from(d.embedding as number[]));
  }
  if (vectors.some((v) => v === undefined) || new Set(vectors.map((v) => v!.length)).size !== 1) return { type: "failed", reason: "the service's answer had no usable vectors" };
  const reported = body.usage?.prompt_tokens;
  const tokens = typeof reported === "number" && reported >= 0 ? reported : Math.ceil(inputs.reduce((n, s) => n + s.length, 0) / 4);
  return { type: "ok", vectors: vectors as Float32Array[], tokens };
}

/** `v` scaled to length 1 (so a dot product is the cosine); a zero vector stays zero. */
export function normalized(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return -Infinity;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
