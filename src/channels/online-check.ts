// One cheap request to a platform's API, for `hearth setup` and `hearth doctor --online`: a
// result value for every outcome (refused, down, odd answer), never a throw, never the secret in
// the text.
import { redact } from "../process/log.ts";

export const CHECK_TIMEOUT_MS = 15_000;

export type CheckResult = { ok: true; detail: string } | { ok: false; problem: string };

/** GET, or POST of a JSON `json` body (the Bot API reads its parameters from the body). */
export async function getJson(url: string, headers: Record<string, string>, signal?: AbortSignal, json?: object): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    headers: json ? { ...headers, "content-type": "application/json" } : headers,
    ...(json ? { method: "POST", body: JSON.stringify(json) } : {}),
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)]) : AbortSignal.timeout(CHECK_TIMEOUT_MS),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the status says enough
  }
  return { status: res.status, body };
}

/** `where` could not be reached: the innermost cause's code, redacted. */
export function unreachable(where: string, err: unknown): { ok: false; problem: string } {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const code = (e as NodeJS.ErrnoException)?.code;
  return { ok: false, problem: `${where} cannot be reached (${redact(code ?? (e instanceof Error ? e.message : String(e)))})` };
}
