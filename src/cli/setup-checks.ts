// The model side of `hearth setup`'s checks: list the models, which costs nothing. The chat
// channels' checks are their descriptors' (channels/<id>/setup.ts). A result value always;
// nothing here throws for a refused key or a server that is down; never a key in a message.
import type { ModelAnswer } from "../config/setup-config.ts";

import { getJson, unreachable, type CheckResult } from "../channels/online-check.ts";

export type { CheckResult };

/** A check's result; `unlisted` when the key and the address were fine and only the model is not there. */
export type ModelCheck = CheckResult | { ok: false; problem: string; unlisted: true };

/** Checks the model key with GET …/models (free). */
export async function checkModelKey(m: ModelAnswer): Promise<ModelCheck> {
  const base = (m.kind === "anthropic" ? (m.baseUrl ?? "https://api.anthropic.com") + "/v1" : (m.baseUrl ?? "http://127.0.0.1:11434/v1")).replace(/\/+$/, "").replace(/\/v1\/v1$/, "/v1");
  const headers: Record<string, string> =
    m.kind === "anthropic" ? { "anthropic-version": "2023-06-01", ...(m.apiKey ? { "x-api-key": m.apiKey } : {}) } : m.kind === "openai" && m.apiKey ? { Authorization: `Bearer ${m.apiKey}` } : {};
  const where = new URL(base).host;
  let r: { status: number; body: any };
  try {
    r = await getJson(`${base}/models${m.kind === "anthropic" ? "?limit=1000" : ""}`, headers);
  } catch (err) {
    const u = unreachable(where, err);
    // Behind a proxy, or with another Messages API endpoint, the address is the thing to change.
    return m.kind === "anthropic" && !u.ok ? { ok: false, problem: `${u.problem}; another address (a proxy, a gateway): --base-url URL, or ANTHROPIC_BASE_URL` } : u;
  }
  if (r.status === 401 || r.status === 403) return { ok: false, problem: `${where} refused the key (HTTP ${r.status}); copy it again` };
  if (r.status !== 200 || !Array.isArray(r.body?.data)) return { ok: false, problem: `${where} answered HTTP ${r.status} without a model list; check the address` };
  const ids = (r.body.data as { id?: unknown }[]).map((d) => d.id).filter((id): id is string => typeof id === "string");
  if (ids.length > 0 && !ids.includes(m.model)) {
    const some = ids.slice(0, 5).join(", ") + (ids.length > 5 ? `, … (${ids.length} in all)` : "");
    return { ok: false, problem: `${where} accepted the key but does not list the model "${m.model}"; it lists ${some}`, unlisted: true };
  }
  return { ok: true, detail: `${where} accepted the key${m.kind === "ollama" || (m.kind === "openai" && !m.apiKey) ? " (none needed)" : ""}; model ${m.model} is there` };
}
