// How `hearth setup` and `hearth doctor --online` reach Discord without discord.js: the bot
// token's shape (one rule for both, so a token setup accepted is never one doctor calls
// malformed), users/@me, and what the owner is asked to send for the handshake (handshake.ts).
import { getJson, unreachable } from "../online-check.ts";

/** null when `token` looks like a bot token (three base64url parts separated by dots); else what is wrong and the fix. */
export function discordTokenProblem(token: string): { problem: string; fix: string } | null {
  return /^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{20,}$/.test(token)
    ? null
    : { problem: "the token does not look like a bot token (three parts separated by dots)", fix: "copy it again from the Developer Portal (Bot → Reset Token)" };
}

/** users/@me: the bot's name, or why the token does not work (a malformed one is not sent). */
export async function checkDiscordToken(token: string, apiBase: string): Promise<{ ok: true; botName: string } | { ok: false; problem: string }> {
  const malformed = discordTokenProblem(token);
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
  return { ok: true, botName: r.body.username };
}

/** Where the owner writes for the Discord handshake: a bot is reached from a server both are in. */
export function discordCodeRequest(botName: string, code: string): string {
  return `Send a direct message saying ${code} to ${botName} in Discord now (its profile in a server you share → Message); only a message with this code names the owner`;
}
