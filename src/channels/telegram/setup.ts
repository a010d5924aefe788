// How `hearth setup` and `hearth doctor --online` reach Telegram: the bot token's shape (one rule
// for both, so a token setup accepted is never one doctor calls malformed), getMe, and the owner
// handshake, a private message to the bot carrying the one-time code (../owner-code.ts).
import { getJson, CHECK_TIMEOUT_MS, unreachable } from "../online-check.ts";
import { carriesOwnerCode } from "../owner-code.ts";
import { printable } from "../printable.ts";
import type { SetupSender } from "../descriptor.ts";

/** null when `token` looks like a Bot API token (the bot's numeric id, a colon, ~35 of [A-Za-z0-9_-]); else what is wrong and the fix. */
export function telegramTokenProblem(token: string): { problem: string; fix: string } | null {
  return /^\d{5,}:[A-Za-z0-9_-]{30,}$/.test(token) ? null : { problem: "the token does not look like a bot token (digits, a colon, then about 35 characters)", fix: "copy it again from @BotFather (/token)" };
}

/** getMe: the bot's username, or why the token does not work (a malformed one is not sent). */
export async function checkTelegramToken(token: string, apiRoot: string): Promise<{ ok: true; botName: string } | { ok: false; problem: string }> {
  const malformed = telegramTokenProblem(token);
  if (malformed) return { ok: false, problem: `${malformed.problem}; ${malformed.fix}` };
  const where = new URL(apiRoot).host;
  let r: { status: number; body: any };
  try {
    r = await getJson(`${apiRoot.replace(/\/+$/, "")}/bot${token}/getMe`, {});
  } catch (err) {
    return unreachable(where, err);
  }
  if (r.status === 401 || r.status === 404) return { ok: false, problem: "Telegram refused the token; copy it again from @BotFather (/token)" };
  if (r.body?.ok !== true || typeof r.body.result?.username !== "string") return { ok: false, problem: `Telegram answered HTTP ${r.status} to getMe` };
  return { ok: true, botName: r.body.result.username };
}

/** The link that opens the bot in Telegram with the code ready to send (the Start button). */
export function telegramStartLink(botUsername: string, code: string): string {
  return `https://t.me/${botUsername}?start=${code}`;
}

/** What the owner sends for the Telegram handshake: the code, typed or through the link's Start button. */
export function telegramCodeRequest(botUsername: string, code: string): string {
  return `Send /start ${code} to @${botUsername} in Telegram now, or open ${telegramStartLink(botUsername, code)}; only a private message with this code names the owner`;
}

/**
 * Waits for the first private message sent to the bot after this starts (messages already
 * waiting are not counted: they were sent before the owner was asked) that carries `code`
 * and whose sender `accept` confirms, then confirms the update to Telegram so the daemon does not
 * answer it later. Every other private message is confirmed too and handed to `ignored` (which
 * must not throw), so no stranger can win by writing first. Null when `signal` ends the wait
 * first. `ready` is called once the messages already waiting are known: ask the owner to write
 * only then, or their message could count as an old one.
 */
export async function awaitTelegramOwner(
  token: string,
  apiRoot: string,
  o: { code: string; signal: AbortSignal; ready: () => void; accept: (s: SetupSender) => Promise<boolean>; ignored: (s: SetupSender) => void; pollMs?: number },
): Promise<SetupSender | null> {
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
        const sender: SetupSender = { id: String(msg.from.id), name: printable(name), username: typeof msg.from.username === "string" ? printable(msg.from.username) : undefined };
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
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
  } catch {
    // The setup is complete either way.
  }
}
