// The Discord owner handshake of `hearth setup`: the wizard connects to the gateway as the bot
// (discord.js, loaded only when a handshake runs), asks the owner to send it a direct message with
// the one-time code (../owner-code.ts), and the first such DM's author — once `accept` confirms
// them — is the owner. Nothing waits on Discord's side: the gateway delivers only messages sent while connected, so an old DM can
// never count. Failures are values with one sentence that never contains the token.
import { Client, Events, GatewayIntentBits, Partials, Routes, type Message } from "discord.js";
import { destroyClient } from "./channel.ts";
import { printable } from "../printable.ts";
import { redact } from "../../process/log.ts";
import { carriesOwnerCode } from "../owner-code.ts";
import type { OwnerHandshake, SetupSender } from "../descriptor.ts";

/** How long the gateway may take to let the bot in; the wait for the owner's DM is the caller's `waitMs`, counted from then. */
const CONNECT_TIMEOUT_MS = 30_000;

type DiscordSender = SetupSender;
type DiscordHandshake = OwnerHandshake;

/**
 * Waits for the first direct message to the bot that carries `code` (owner-code.ts) and whose
 * author `accept` confirms, greets that author in the DM (best effort) and disconnects. A DM
 * without the code is handed to `ignored` (which must not throw) and never answered. `ready` is called once with the bot's name when
 * the gateway connection is up: ask the owner to write only then. `accept` is called for one
 * author at a time, in the order their DMs arrived; it must not throw. "timeout" when no DM was
 * accepted within `waitMs` of `ready` (a confirmation asked by then still counts); "failed" when
 * the gateway refused the bot or did not let it in within 30 s.
 */
export async function awaitDiscordOwner(
  token: string,
  apiBase: string,
  o: { code: string; waitMs: number; ready: (botName: string) => void; accept: (s: DiscordSender) => Promise<boolean>; ignored: (s: DiscordSender) => void; greeting: string },
): Promise<DiscordHandshake> {
  const client = new Client({
    // The daemon's own intents for DMs. A DM's content needs no MessageContent, but asking for it
    // here makes a bot whose portal page lacks the privileged intent fail now (close 4014), in
    // the wizard, rather than at the daemon's first start.
    intents: [GatewayIntentBits.DirectMessages, GatewayIntentBits.MessageContent],
    // Without it discord.js drops messages in DM channels it has not cached, i.e. every first DM.
    partials: [Partials.Channel],
    rest: { api: apiBase },
  });
  const where = new URL(apiBase).host;
  const inbox: Message[] = [];
  // Settled by a close discord.js does not recover from (a refused token or intents), at any time.
  let refuse!: (h: DiscordHandshake) => void;
  const refused = new Promise<DiscordHandshake>((resolve) => (refuse = resolve));
  let wake: (() => void) | null = null;
  client.on(Events.MessageCreate, (m) => {
    if (m.inGuild() || m.author.bot) return;
    inbox.push(m);
    wake?.();
  });
  client.on(Events.ShardDisconnect, (event) => refuse({ kind: "failed", problem: refusal(event.code, where) }));
  client.on(Events.Error, () => {});
  try {
    const connected = await Promise.race([connect(client, token, where), refused]);
    if (connected.kind !== "connected") return connected;
    o.ready(client.user?.username ?? "the bot");
    const signal = AbortSignal.timeout(o.waitMs);
    const ended = new Promise<DiscordHandshake>((resolve) => signal.addEventListener("abort", () => resolve({ kind: "timeout" }), { once: true }));
    for (;;) {
      const m = inbox.shift();
      if (!m) {
        if (signal.aborted) return { kind: "timeout" };
        const end = await Promise.race([new Promise<null>((resolve) => (wake = () => resolve(null))), ended, refused]);
        wake = null;
        if (end) return end;
        continue;
      }
      const sender: DiscordSender = { id: m.author.id, name: printable(m.author.globalName ?? m.author.username), username: printable(m.author.username) };
      if (!carriesOwnerCode(m.content, o.code)) {
        o.ignored(sender);
        continue;
      }
      if (!(await o.accept(sender))) continue;
      await client.rest.post(Routes.channelMessages(m.channelId), { body: { content: o.greeting, allowed_mentions: { parse: [] } } }).catch(() => {
        // The setup is complete either way.
      });
      return { kind: "owner", sender };
    }
  } finally {
    client.removeAllListeners();
    client.on(Events.Error, () => {});
    await destroyClient(client).catch(() => {});
  }
}

/** Logs in and waits for READY or 30 s; a refusal by the gateway is the caller's to watch. */
async function connect(client: Client, token: string, where: string): Promise<{ kind: "connected" } | DiscordHandshake> {
  let timer: NodeJS.Timeout | undefined;
  const ready = new Promise<{ kind: "connected" }>((resolve) => client.once(Events.ClientReady, () => resolve({ kind: "connected" })));
  const late = new Promise<DiscordHandshake>((resolve) => {
    const give = () => resolve({ kind: "failed", problem: `Discord's gateway at ${where} did not let the bot in within ${Math.round(CONNECT_TIMEOUT_MS / 1000)} s; check the network and run setup again` });
    timer = setTimeout(give, CONNECT_TIMEOUT_MS);
  });
  // After a fatal close discord.js emits ShardDisconnect before login rejects, so the caller's
  // refusal (which says what to fix) wins the race over this generic sentence.
  const login = client.login(token).then(
    () => ready,
    (err: unknown): DiscordHandshake => ({
      kind: "failed",
      problem: `Discord's gateway cannot be reached at ${where} (${redact(err instanceof Error ? err.message : String(err)).split(token).join("[token]")})`,
    }),
  );
  try {
    return await Promise.race([login, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a gateway close code that discord.js does not recover from means for the owner. */
function refusal(code: number, where: string): string {
  switch (code) {
    case 4004:
      return "Discord's gateway refused the token (4004 Authentication failed); reset it in the Developer Portal (Bot → Reset Token)";
    case 4013:
    case 4014:
      return `Discord's gateway refused the intents (${code}); enable "Message Content Intent" on the Developer Portal's Bot page`;
    default:
      return `Discord's gateway at ${where} closed the connection with ${code}`;
  }
}
