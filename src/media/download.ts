// A bounded download for channels' `Attachment.fetch`: reads at most `maxBytes` and stops the
// transfer the moment more would come, so an over-size file costs no more than the limit.

/** Thrown by a channel's fetch when the file is past the limit; nothing past it was read. */
export class TooLargeError extends Error {
  readonly tooLarge = true;
  constructor(maxBytes: number) {
    super(`The file is larger than ${maxBytes} bytes.`);
  }
}

export const isTooLarge = (err: unknown): boolean => typeof err === "object" && err !== null && (err as { tooLarge?: unknown }).tooLarge === true;

/** GETs `url` (a platform's file endpoint, built by the channel). Rejects on a non-2xx answer. */
export async function fetchBounded(url: string, maxBytes: number, signal: AbortSignal, init: RequestInit = {}): Promise<Uint8Array> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await fetch(url, { ...init, signal: controller.signal, redirect: "error" });
    if (!res.ok || !res.body) throw new Error(`the file endpoint answered HTTP ${res.status}`);
    const stated = Number(res.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(stated) && stated > maxBytes) throw new TooLargeError(maxBytes);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      total += chunk.length;
      if (total > maxBytes) throw new TooLargeError(maxBytes);
      chunks.push(chunk);
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  } finally {
    // Ends the transfer when we stopped reading early (too large) and frees the socket.
    controller.abort();
    signal.removeEventListener("abort", onAbort);
  }
}
