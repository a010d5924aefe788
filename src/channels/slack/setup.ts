// How `hearth setup` and `hearth doctor --online` reach Slack without @slack/bolt: the two
// tokens' shapes (one rule for both commands), one cheap request for each (auth.test for the bot
// token, apps.connections.open for the app-level token), and the app manifest the owner pastes
// into "Create an app → From a manifest".
import { getJson, unreachable } from "../online-check.ts";

export const SLACK_API = "https://slack.com/api";

type Shape = { problem: string; fix: string } | null;

/** null when `token` looks like a bot token (`xoxb-…`); else what is wrong and the fix. */
export function slackBotTokenProblem(token: string): Shape {
  return /^xoxb-[A-Za-z0-9-]{10,}$/.test(token)
    ? null
    : { problem: "the bot token does not look like one (it starts with xoxb-)", fix: "copy the Bot User OAuth Token from your app's OAuth & Permissions page" };
}

/** null when `token` looks like an app-level token (`xapp-…`); else what is wrong and the fix. */
export function slackAppTokenProblem(token: string): Shape {
  return /^xapp-[A-Za-z0-9-]{10,}$/.test(token)
    ? null
    : { problem: "the app token does not look like one (it starts with xapp-)", fix: "make one under Basic Information → App-Level Tokens with the connections:write scope" };
}

const methodUrl = (api: string, method: string) => `${api.replace(/\/*$/, "/")}${method}`;

async function call(api: string, method: string, token: string): Promise<{ ok: true; body: any } | { ok: false; problem: string }> {
  let r: { status: number; body: any };
  try {
    r = await getJson(methodUrl(api, method), { Authorization: `Bearer ${token}` }, undefined, {});
  } catch (err) {
    return unreachable(new URL(api).host, err);
  }
  if (r.status !== 200 || typeof r.body?.ok !== "boolean") return { ok: false, problem: `Slack answered HTTP ${r.status} to ${method}` };
  if (!r.body.ok) return { ok: false, problem: `Slack refused ${method} (${String(r.body.error)})` };
  return { ok: true, body: r.body };
}

/** auth.test with the bot token: the bot's name, or why not (a malformed token is not sent). */
export async function checkSlackBotToken(token: string, api: string): Promise<{ ok: true; botName: string; userId: string } | { ok: false; problem: string }> {
  const malformed = slackBotTokenProblem(token);
  if (malformed) return { ok: false, problem: `${malformed.problem}; ${malformed.fix}` };
  const r = await call(api, "auth.test", token);
  if (!r.ok) return { ok: false, problem: `${r.problem}; ${slackBotTokenProblem("")!.fix}` };
  return { ok: true, botName: String(r.body.user ?? "the bot"), userId: String(r.body.user_id ?? "") };
}

/** apps.connections.open with the app-level token: Socket Mode would let the app in. */
export async function checkSlackAppToken(token: string, api: string): Promise<{ ok: true } | { ok: false; problem: string }> {
  const malformed = slackAppTokenProblem(token);
  if (malformed) return { ok: false, problem: `${malformed.problem}; ${malformed.fix}` };
  const r = await call(api, "apps.connections.open", token);
  if (!r.ok) return { ok: false, problem: `${r.problem}; check that Socket Mode is on and the token has connections:write` };
  // The URL it returns is a one-time ticket, never opened here: Slack frees it after a while.
  return { ok: true };
}

/** Both tokens, the bot's first (setup and doctor read one sentence). */
export async function checkSlackTokens(botToken: string, appToken: string, api: string): Promise<{ ok: true; botName: string } | { ok: false; problem: string }> {
  const bot = await checkSlackBotToken(botToken, api);
  if (!bot.ok) return bot;
  const app = await checkSlackAppToken(appToken, api);
  return app.ok ? { ok: true, botName: bot.botName } : app;
}

export function slackCodeRequest(botName: string, code: string): string {
  return `Send a direct message saying ${code} to @${botName} in Slack now (Apps → ${botName} → Messages, or search for it); only a message with this code names the owner`;
}

/**
 * The app manifest: a bot user, Socket Mode on, the events Hearth reads (messages in DMs and in
 * the channels it is in) and the scopes for answering, reacting, files and buttons.
 */
export const SLACK_MANIFEST = `{
  "display_information": { "name": "Hearth" },
  "features": {
    "app_home": { "messages_tab_enabled": true, "messages_tab_read_only_enabled": false },
    "bot_user": { "display_name": "Hearth", "always_online": true }
  },
  "oauth_config": {
    "scopes": {
      "bot": ["chat:write", "im:history", "im:read", "im:write", "channels:history", "groups:history", "mpim:history", "reactions:write", "files:read", "files:write", "users:read"]
    }
  },
  "settings": {
    "event_subscriptions": { "bot_events": ["message.im", "message.channels", "message.groups", "message.mpim"] },
    "interactivity": { "is_enabled": true },
    "socket_mode_enabled": true,
    "token_rotation_enabled": false
  }
}`;

/** What the owner does in Slack before setup can check anything, printed by the wizard. */
export const SLACK_STEPS = `1. api.slack.com/apps → Create New App → From a manifest → your workspace → paste:
${SLACK_MANIFEST}
2. Install to Workspace; copy the Bot User OAuth Token (xoxb-…) from OAuth & Permissions.
3. Basic Information → App-Level Tokens → Generate, scope connections:write; copy it (xapp-…).`;
