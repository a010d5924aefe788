// signal-cli's JSON-RPC over HTTP (`POST /api/v1/rpc`, JSON-RPC 2.0): one request per call, the
// answer read with a bound (a `getAttachment` carries a file as base64), failures as one error
// class that says whether trying again later can help.

/** Longest JSON-RPC answer read for an ordinary call. */
const DEFAULT_MAX_BYTES = 1_000_000;
const DEFAULT_TIMEOUT_MS = 30_000;

/** A JSON-RPC call that failed: signal-cli unreachable (`retryable`), or an error it answered. */
export class SignalRpcError extends Error {
  override name = "SignalRpcError";
  /** signal-cli's JSON-RPC error code; absent when no answer came. */
  readonly code: number | undefined;
  readonly retryable: boolean;
  constructor(message: string, o: { code?: number; retryable: boolean; cause?: unknown }) {
    super(message, o.cause === undefined ? undefined : { cause: o.cause });
    this.code = o.code;
    this.retryable = o.retryable;
  }
}

/** The answer to a signal-cli response that was larger than the caller allows. */
export class SignalTooLargeError extends Error {
  override name = "SignalTooLargeError";
  readonly tooLarge = true;
}

let nextId = 0;

/**
 * Calls `method` with `params` on signal-cli at `httpUrl` and resolves with its `result`. Rejects
 * with SignalRpcError (retryable when signal-cli could not be reached or answered HTTP 5xx), or
 * SignalTooLargeError when the answer exceeds `maxBytes`. Never retries by itself.
 */
export async function callSignal(httpUrl: string, method: string, params: Record<string, unknown> = {}, o: { signal?: AbortSignal; maxBytes?: number; timeoutMs?: number } = {}): Promise<unknown> {
  const timeout = AbortSignal.timeout(o.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  const id = ++nextId;
  let res: Response;
  try {
    res = await fetch(new URL("/api/v1/rpc", httpUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      signal,
    });
  } catch (err) {
    throw new SignalRpcError(`signal-cli cannot be reached at ${new URL(httpUrl).host} (${causeOf(err)})`, { retryable: true, cause: err });
  }
  const body = await readBounded(res, o.maxBytes ?? DEFAULT_MAX_BYTES).catch((err: unknown) => {
    if (err instanceof SignalTooLargeError) throw err;
    throw new SignalRpcError(`signal-cli's answer to ${method} broke off (${causeOf(err)})`, { retryable: true, cause: err });
  });
  if (res.status >= 500) throw new SignalRpcError(`signal-cli answered HTTP ${res.status} to ${method}`, { retryable: true });
  if (res.status === 201) return null;
  if (res.status !== 200) throw new SignalRpcError(`signal-cli answered HTTP ${res.status} to ${method}`, { retryable: false });
  let reply: { result?: unknown; error?: { code?: number; message?: string } };
  try {
    reply = JSON.parse(new TextDecoder().decode(body)) as typeof reply;
  } catch {
    throw new SignalRpcError(`signal-cli's answer to ${method} is not JSON`, { retryable: false });
  }
  if (reply.error) {
    const code = typeof reply.error.code === "number" ? reply.error.code : undefined;
    throw new SignalRpcError(`signal-cli refused ${method}: ${String(reply.error.message ?? "no reason given").slice(0, 300)}`, { ...(code !== undefined ? { code } : {}), retryable: false });
  }
  return reply.result ?? null;
}

/** The response body, or SignalTooLargeError as soon as more than `maxBytes` arrived. */
async function readBounded(res: Response, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!res.body) return new Uint8Array();
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      throw new SignalTooLargeError(`signal-cli's answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The innermost cause's code or message, for one line of a log or a status. */
export function causeOf(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const code = (e as NodeJS.ErrnoException)?.code;
  return code ?? (e instanceof Error ? e.message : String(e));
}
