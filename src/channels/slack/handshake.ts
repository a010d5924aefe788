// The Slack owner handshake of `hearth setup`: the wizard connects in Socket Mode as the app
// (bolt, loaded only when a handshake runs), asks the owner to send it a direct message with the
// one-time code (../owner-code.ts), and the first such DM's author — once `accept` confirms them —
// is the owner. Slack delivers only events from while the app is connected, so an old DM never
// counts. Failures are values with one sentence that never contains a token.
import type { Logger } from "../../process/log.ts";
import type { OwnerHandshake, SetupSender } from "../descriptor.ts";
import { carriesOwnerCode } from "../owner-code.ts";
import { printable } from "../printable.ts";
import { connectSlack, disconnectSlack, prepareSlackApp, type SlackConnection } from "./connection.ts";
import type { SlackMessageEvent } from "./inbound.ts";
import { escapeSlack } from "./mrkdwn.ts";

const CONNECT_TIMEOUT_MS = 30_000;

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

export async function awaitSlackOwner(
  botToken: string,
  appToken: string,
  apiUrl: string,
  o: { code: string; waitMs: number; ready: (botName: string) => void; accept: (s: SetupSender) => Promise<boolean>; ignored: (s: SetupSender) => void; greeting: string },
): Promise<OwnerHandshake> {
  let conn: SlackConnection;
  try {
    conn = await prepareSlackApp({ botToken, appToken, apiUrl, log: quiet });
  } catch (err) {
    return { kind: "failed", problem: (err as Error).message };
  }
  const inbox: SlackMessageEvent[] = [];
  let wake: (() => void) | null = null;
  conn.app.event("message", async ({ event }) => {
    const e = event as unknown as SlackMessageEvent;
    if (e.channel_type !== "im" || !e.user || e.subtype || e.user === conn.bot.id) return;
    inbox.push(e);
    wake?.();
  });
  try {
    await connectSlack(conn, apiUrl, CONNECT_TIMEOUT_MS);
  } catch (err) {
    await disconnectSlack(conn);
    return { kind: "failed", problem: (err as Error).message };
  }
  try {
    o.ready(conn.bot.name);
    const signal = AbortSignal.timeout(o.waitMs);
    const ended = new Promise<null>((resolve) => signal.addEventListener("abort", () => resolve(null), { once: true }));
    for (;;) {
      const e = inbox.shift();
      if (!e) {
        if (signal.aborted) return { kind: "timeout" };
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), ended]);
        wake = null;
        continue;
      }
      const sender = await senderOf(conn, e.user!);
      if (!carriesOwnerCode(e.text, o.code)) {
        o.ignored(sender);
        continue;
      }
      if (!(await o.accept(sender))) continue;
      await conn.app.client.chat.postMessage({ channel: e.channel, text: escapeSlack(o.greeting) }).catch(() => {
        // The setup is complete either way.
      });
      return { kind: "owner", sender };
    }
  } finally {
    await disconnectSlack(conn);
  }
}

async function senderOf(conn: SlackConnection, id: string): Promise<SetupSender> {
  try {
    const r = (await conn.app.client.users.info({ user: id })) as { user?: { name?: string; real_name?: string; profile?: { display_name?: string } } };
    const name = r.user?.profile?.display_name || r.user?.real_name || r.user?.name || id;
    return { id, name: printable(name), ...(r.user?.name ? { username: printable(r.user.name) } : {}) };
  } catch {
    return { id, name: id };
  }
}
