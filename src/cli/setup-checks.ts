// The network side of `hearth setup`: one cheap request per answer (the model key: list the
// models, which costs nothing; a bot token: getMe or users/@me), and the Telegram handshake that
// finds the owner. Each returns a result value; nothing here throws for a refused key or a
// server that is down. Messages never contain a key or a token.
import { botTokenProblem } from "../channels/bot-token.ts";
import { printable } from "../channels/printable.ts";
import type { ModelAnswer } from "../config/setup-config.ts";
import { redact } from "../log.ts";
import { carriesOwnerCode } from "./owner-code.ts";

const TIMEOUT_MS = 15_000;

export type CheckResult = { ok: true; detail: string } | { ok: false; problem: string };

/** GET, or POST of a JSON `json` body (the Bot API reads its parameters from the body). */
async function getJson(url: string, headers: Record<string, string>, signal?: AbortSignal, json?: object): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    headers: json ? { ...headers, "content-type": "application/json" } : headers,
    ...(json ? { method: "POST", body: JSON.stringify(json) } : {}),
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS),
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

const unreachable = (where: string, err: unknown): CheckResult => {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const code = (e as NodeJS.ErrnoException)?.code;
  return { ok: false, problem: `${where} cannot be reached (${redact(code ?? (e instanceof Error ? e.message : String(e)))})` };
};

/** Checks the model key with GET …/models (free). */
export async function checkModelKey(m: ModelAnswer): Promise<CheckResult> {
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
  if (ids.length > 0 && !ids.includes(m.model)) return { ok: false, problem: `${where} accepted the key but does not list the model "${m.model}"` };
  return { ok: true, detail: `${where} accepted the key${m.kind === "ollama" || (m.kind === "openai" && !m.apiKey) ? " (none needed)" : ""}; model ${m.model} is there` };
}

export interface TelegramBot {
  id: number;
  username: string;
}

/** getMe: the bot's name, or why the token does not work (a malformed one is not sent). */
export async function checkTelegramToken(token: string, apiRoot: string): Promise<{ ok: true; bot: TelegramBot } | { ok: false; problem: string }> {
  const malformed = botTokenProblem("telegram", token);
  if (malformed) return { ok: false, problem: `${malformed.problem}; ${malformed.fix}` };
  const where = new URL(apiRoot).host;
  let r: { status: number; body: any };
  try {
    r = await getJson(`${apiRoot.replace(/\/+$/, "")}/bot${token}/getMe`, {});
  } catch (err) {
    const u = unreachable(where, err);
    return { ok: false, problem: u.ok ? "" : u.problem };
  }
  if (r.status === 401 || r.status === 404) return { ok: false, problem: "Telegram refused the token; copy it again from @BotFather (/token)" };
  if (r.body?.ok !== true || typeof r.body.result?.username !== "string") return { ok: false, problem: `Telegram answered HTTP ${r.status} to getMe` };
  return { ok: true, bot: { id: Number(r.body.result.id), username: r.body.result.username } };
}

/** users/@me: the Discord bot's name, or why the token does not work (a malformed one is not sent). */
export async function checkDiscordToken(token: string, apiBase: string): Promise<CheckResult> {
  const malformed = botTokenProblem("discord", token);
  if (malformed) return { ok: false, problem: `${malformed.problem}; ${malformed.fix}` };
  const where = new URL(apiBase).host;
  let r: { status: number; body: any };
  try {
    r = await getJson(`${apiBase.replace(/\/+$/, "")}/v10/users/@me`, { Authorization: `Bot ${token}` });
  } catch (err) {
    return unreachable(where, err);
  }
  if (r.status === 401) return { ok: false, problem: "Discord refused the token; reset it in the Developer Portal (Bot → Reset Token)" };
  if (r.status !== 200 || typeof r.body?.username !== "string") return { ok: false, problem: `Discord answered HTTP ${r.status} to users/@me` };
  return { ok: true, detail: `the bot is ${r.body.username}` };
}

export interface TelegramSender {
  id: string;
  name: string;
  username: string | undefined;
}

/**
 * Waits for the first private message sent to the bot after this starts (messages already
 * waiting are not counted: they were sent before the owner was asked) that carries `code`
 * (owner-code.ts) and whose sender `accept` confirms, then confirms the update to Telegram so the
 * daemon does not answer it later. Every other private message is confirmed too and handed to
 * `ignored` (which must not throw), so no stranger can win by writing first. Null when `signal`
 * ends the wait first. `ready` is called once the messages already waiting are known: ask the
 * owner to write only then, or their message could count as an old one.
 */
export async function awaitTelegramOwner(
  token: string,
  apiRoot: string,
  o: { code: string; signal: AbortSignal; ready: () => void; accept: (s: TelegramSender) => Promise<boolean>; ignored: (s: TelegramSender) => void; pollMs?: number },
): Promise<TelegramSender | null> {
  const { signal, accept, pollMs = 1000 } = o;
  const api = `${apiRoot.replace(/\/+$/, "")}/bot${token}`;
  const updates = async (offset?: number): Promise<any[]> => {
    const r = await getJson(`${api}/getUpdates`, {}, signal, { timeout: 0, allowed_updates: ["message"], ...(offset !== undefined ? { offset } : {}) });
    return Array.isArray(r.body?.result) ? r.body.result : [];
  };
  let seen = -1;
  try {
    for (const u of await updates()) seen = Math.max(seen, Number(u.update_id));
    o.ready();
    while (!signal.aborted) {
      for (const u of await updates(seen + 1)) {
        seen = Math.max(seen, Number(u.update_id));
        const msg = u.message;
        if (msg?.chat?.type !== "private" || !msg.from || msg.from.is_bot) continue;
        await updates(seen + 1); // confirmed: not handed to the daemon later
        const name = [msg.from.first_name, msg.from.last_name].filter(Boolean).join(" ") || String(msg.from.id);
        const sender: TelegramSender = { id: String(msg.from.id), name: printable(name), username: typeof msg.from.username === "string" ? printable(msg.from.username) : undefined };
        if (!carriesOwnerCode(typeof msg.text === "string" ? msg.text : undefined, o.code)) o.ignored(sender);
        else if (await accept(sender)) return sender;
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } catch (err) {
    if (signal.aborted) return null;
    throw err;
  }
  return null;
}

/** Tells the new owner, in their chat, that the handshake worked. Best effort. */
export async function greetOwner(token: string, apiRoot: string, chatId: string, text: string): Promise<void> {
  try {
    await fetch(`${apiRoot.replace(/\/+$/, "")}/bot${token}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chat_id: chatId, text }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch {
    // The setup is complete either way.
  }
}
