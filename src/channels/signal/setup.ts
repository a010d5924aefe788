// How `hearth setup` and `hearth doctor --online` reach signal-cli: one `version` call to its
// JSON-RPC endpoint. Results are values, never throws.
import { callSignal, causeOf } from "./rpc.ts";

export async function checkSignalDaemon(httpUrl: string): Promise<{ ok: true; detail: string } | { ok: false; problem: string }> {
  try {
    const r = (await callSignal(httpUrl, "version", {}, { timeoutMs: 15_000 })) as { version?: unknown } | null;
    return { ok: true, detail: `signal-cli ${typeof r?.version === "string" ? r.version : "(version unknown)"} answers at ${new URL(httpUrl).host}` };
  } catch (err) {
    return { ok: false, problem: err instanceof Error ? err.message : causeOf(err) };
  }
}
