// One Socket Mode connection to Slack on @slack/bolt, for the channel and for setup's owner
// handshake: the bot's identity (auth.test), the app over a SocketModeReceiver pointed at the
// configured Web API address (apps.connections.open on it names the WebSocket), and the
// envelope acks.
//
// Bolt acknowledges an Events API envelope before its listeners run. Hearth acknowledges a
// message only once the listener has it (the inbox wrote it to disk): a daemon that dies in
// between has not acked, so Slack delivers the event again, and the inbox's dedupe by the
// message's channel and ts answers a redelivered event once.
import { App, LogLevel, SocketModeReceiver } from "@slack/bolt";
import type { Logger } from "../../process/log.ts";

export interface SlackConnectionOptions {
  botToken: string;
  appToken: string;
  /** The Web API address ("https://slack.com/api/"); Socket Mode learns its WebSocket from it. */
  apiUrl: string;
  log: Logger;
}

export interface SlackConnection {
  app: App;
  receiver: SocketModeReceiver;
  bot: { id: string; name: string };
}

/** The connection could not be made; `retryable` when Slack was out of reach rather than refusing. */
export class SlackConnectError extends Error {
  override name = "SlackConnectError";
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.retryable = retryable;
  }
}

/** Slack's refusals that no retry will cure: the token, the account, the app. */
const FINAL_ERRORS = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "user_removed_from_team", "team_disabled", "not_allowed_token_type", "missing_scope"]);

/** Bolt's logger as Hearth's log: its chatter at debug, its problems as they are. */
export function boltLogger(log: Logger) {
  let level = LogLevel.INFO;
  const line = (m: unknown[]) => ({ message: m.map((x) => (x instanceof Error ? x.message : String(x))).join(" ") });
  return {
    debug: (...m: unknown[]) => log.debug("slack.sdk", line(m)),
    info: (...m: unknown[]) => log.debug("slack.sdk", line(m)),
    warn: (...m: unknown[]) => log.warn("slack.sdk", line(m)),
    error: (...m: unknown[]) => log.warn("slack.sdk", line(m)),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

/** The Slack error code of a Web API failure, when it is one. */
export const slackErrorCode = (err: unknown): string | undefined => {
  const code = (err as { data?: { error?: unknown } })?.data?.error;
  return typeof code === "string" ? code : undefined;
};

/**
 * Makes the app (not yet connected): auth.test names the bot; `onEvent` receives every
 * envelope's body after the app's listeners ran, and the events envelope is acked after them.
 */
export async function prepareSlackApp(o: SlackConnectionOptions): Promise<SlackConnection> {
  const logger = boltLogger(o.log);
  const clientOptions = { slackApiUrl: o.apiUrl, logger };
  const receiver = new SocketModeReceiver({ appToken: o.appToken, logger, installerOptions: { clientOptions: { ...clientOptions } } });
  const app = new App({ token: o.botToken, receiver, logger, clientOptions, tokenVerificationEnabled: false, deferInitialization: false });
  let who: { user_id?: string; user?: string; bot_id?: string };
  try {
    who = (await app.client.auth.test()) as typeof who;
  } catch (err) {
    const code = slackErrorCode(err);
    if (code && FINAL_ERRORS.has(code)) throw new SlackConnectError(`Slack refused the bot token (${code}): set a valid SLACK_BOT_TOKEN (OAuth & Permissions → Bot User OAuth Token)`, false, err);
    throw new SlackConnectError(`Slack cannot be reached at ${o.apiUrl} (${code ?? (err instanceof Error ? err.message : String(err))})`, true, err);
  }
  if (!who.user_id) throw new SlackConnectError("Slack's auth.test did not name the bot user: is this a bot token (xoxb-)?", false);
  deferEventAcks(receiver, app, o.log);
  return { app, receiver, bot: { id: who.user_id, name: who.user ?? "hearth" } };
}

/** Replaces the receiver's dispatch with one that acks an Events API envelope only after its listeners settled. */
function deferEventAcks(receiver: SocketModeReceiver, app: App, log: Logger): void {
  type Envelope = { ack: (response?: Record<string, unknown>) => Promise<void>; type: string; body: Record<string, unknown>; retry_num?: number; retry_reason?: string };
  receiver.client.removeAllListeners("slack_event");
  receiver.client.on("slack_event", async (e: Envelope) => {
    const events = e.type === "events_api";
    const event = { body: e.body, ack: events ? async () => {} : e.ack, retryNum: e.retry_num, retryReason: e.retry_reason, customProperties: {} };
    try {
      await app.processEvent(event as Parameters<App["processEvent"]>[0]);
    } catch (error) {
      // Not acked: Slack delivers it again, and the dedupe keeps it to one answer.
      log.warn("slack.event_failed", { error, retry: e.retry_num ?? 0 });
      return;
    }
    if (events) await e.ack().catch((error: unknown) => log.debug("slack.ack_failed", { error }));
  });
}

/** Connects (resolves on Slack's hello), or says why not within `timeoutMs`. */
export async function connectSlack(c: SlackConnection, apiUrl: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SlackConnectError(`Slack's Socket Mode did not let the app in within ${Math.round(timeoutMs / 1000)} s (${apiUrl}); check the network`, true)), timeoutMs);
  });
  try {
    await Promise.race([c.app.start(), late]);
  } catch (err) {
    if (err instanceof SlackConnectError) throw err;
    const code = slackErrorCode(err);
    if (code && FINAL_ERRORS.has(code)) throw new SlackConnectError(`Slack refused the app-level token (${code}): set a valid SLACK_APP_TOKEN (Basic Information → App-Level Tokens, scope connections:write) and turn Socket Mode on`, false, err);
    throw new SlackConnectError(`could not open Slack's Socket Mode at ${apiUrl}: ${code ?? (err instanceof Error ? err.message : String(err))}`, true, err);
  } finally {
    clearTimeout(timer);
  }
}

/** Disconnects; safe when never connected. */
export async function disconnectSlack(c: SlackConnection): Promise<void> {
  c.receiver.client.removeAllListeners("slack_event");
  await c.app.stop().catch(() => {});
}
