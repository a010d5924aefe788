// How `hearth setup` and `hearth doctor --online` reach a Matrix homeserver without
// matrix-js-sdk: the access token's shape, `account/whoami` (one cheap request that says whose
// token it is), and what the owner is asked to send for the handshake (handshake.ts).
import { getJson, unreachable } from "../online-check.ts";

/** null when `token` looks like an access token (one word of printable characters); else what is wrong and the fix. */
export function matrixTokenProblem(token: string): { problem: string; fix: string } | null {
  return /^[\x21-\x7e]{16,}$/.test(token)
    ? null
    : { problem: "the access token does not look like one (a single word of at least 16 characters)", fix: "copy it again (Element: Settings → Help & About → Access Token, or the login API)" };
}

/** The bot's user id and device, or why the token does not work (a malformed one is not sent). */
/** `retryable`: the homeserver was out of reach (the request may succeed later); else it answered no. */
export async function whoami(token: string, homeserverUrl: string): Promise<{ ok: true; userId: string; deviceId: string | undefined } | { ok: false; problem: string; retryable?: boolean }> {
  const malformed = matrixTokenProblem(token);
  if (malformed) return { ok: false, problem: `${malformed.problem}; ${malformed.fix}` };
  const where = new URL(homeserverUrl).host;
  let r: { status: number; body: any };
  try {
    r = await getJson(`${homeserverUrl.replace(/\/+$/, "")}/_matrix/client/v3/account/whoami`, { Authorization: `Bearer ${token}` });
  } catch (err) {
    return { ...unreachable(where, err), retryable: true };
  }
  if (r.status >= 500) return { ok: false, problem: `the homeserver at ${where} answered HTTP ${r.status} to account/whoami`, retryable: true };
  if (r.status === 401) return { ok: false, problem: `the homeserver at ${where} refused the access token (${r.body?.errcode ?? "401"}); log the bot in again and copy its new token` };
  if (r.status !== 200 || typeof r.body?.user_id !== "string") return { ok: false, problem: `the homeserver at ${where} answered HTTP ${r.status} to account/whoami` };
  return { ok: true, userId: r.body.user_id, deviceId: typeof r.body.device_id === "string" ? r.body.device_id : undefined };
}

export async function checkMatrixToken(token: string, homeserverUrl: string): Promise<{ ok: true; botName: string } | { ok: false; problem: string }> {
  const r = await whoami(token, homeserverUrl);
  return r.ok ? { ok: true, botName: r.userId } : { ok: false, problem: r.problem };
}

/** Where the owner writes for the Matrix handshake: a new direct chat with the bot. */
export function matrixCodeRequest(botName: string, code: string): string {
  return `Start a direct chat with ${botName} in your Matrix client (Element: + → Start new chat) and send ${code}; only a message with this code names the owner`;
}
