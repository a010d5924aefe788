// Email as Hearth knows it: the `channels.email` section (an IMAP account Hearth watches, an SMTP
// account it answers with, the owner's addresses and the server that vouches for them), what mail
// can do, its chat ids, and doctor's checks. The adapter (channel.ts: imapflow, nodemailer,
// mailparser) loads only when it runs.
import type { ChannelCheck, ChannelDescriptor } from "../descriptor.ts";
import { PROVIDER_IDS, PROVIDERS } from "./presets.ts";
import { serversOf } from "./servers.ts";
import { schema, type EmailConfig } from "./config.ts";


export type { EmailConfig };

/** What the section lacks to run (an address, the hosts); null when nothing. */
function problemOf(c: EmailConfig): string | null {
  if (!c.address) return "no address (the mailbox Hearth watches)";
  for (const side of ["imap", "smtp"] as const) if (!c.provider && !c[side].host) return `no ${side}.host and no provider (${PROVIDER_IDS.join(", ")})`;
  return null;
}

const NO_GROUPS = { policy: "disabled" as const, allow: [], requireMention: true, tasks: [], rateLimit: { perSender: 0, perChat: 0, window: "1h" } };
const k = (key: string) => `channels.email.${key}`;

export const email: ChannelDescriptor<EmailConfig, "email"> = {
  id: "email",
  name: "Email",
  capabilities: { edits: false, buttons: false, reactions: false, threads: true, filesIn: true, filesOut: false, voiceIn: false, voiceOut: false, maxMessageLength: 20_000, groups: false, strangers: true },
  config: {
    schema,
    template: `"provider": null,                    // fills in the hosts: ${PROVIDER_IDS.join(" | ")} (or set imap/smtp yourself)
"address": "<the mailbox Hearth reads, e.g. hearth.assistant@gmail.com>",
"password": "<app password>",        // or set EMAIL_PASSWORD (one password for IMAP and SMTP)
"imap": { "folder": "INBOX" },       // also host, port, secure, user when no provider fits
"smtp": {},                          // host, port, secure, user
"authservId": null,                  // e.g. "mx.google.com": your own server's name in Authentication-Results (docs/channels/email.md)
"ownerAddresses": ["<your own address, e.g. you@example.org>"], // yours only when your server vouches
"dmPolicy": "disabled",              // other senders: disabled (ignored) | allowlist | pairing
"maxPendingPairings": 3,             // pairing codes that may wait for your approval at once
"allowFrom": [],                     // addresses that may write without pairing (never see private files)
"dmRateLimit": { "perSender": 30, "window": "1h" }, // mails per allowed person per window; 0 = no limit
"queueMode": null                    // overrides agent.queueMode for this channel`,
    rows: [
      { key: k("provider"), default: "`null`", meaning: "fills in the hosts and ports: `gmail`, `fastmail`, `outlook`, `icloud`, `proton` (through Proton Mail Bridge)" },
      { key: k("address"), default: "—", meaning: "the mailbox Hearth watches and answers from (also the login unless `imap.user`/`smtp.user`)" },
      { key: k("password"), default: "—", meaning: "or `EMAIL_PASSWORD`: the (app) password, for IMAP and SMTP" },
      { key: k("imap"), default: '`{ "folder": "INBOX" }`', meaning: "`host`, `port`, `secure`, `user` (from the provider when set) and the `folder` watched with IMAP IDLE" },
      { key: k("smtp"), default: "`{}`", meaning: "`host`, `port`, `secure`, `user` of the account answers are sent with (from the provider when set)" },
      { key: k("authservId"), default: "`null`", meaning: "the name your own mail server writes first in `Authentication-Results`; without it no mail counts as yours" },
      { key: k("ownerAddresses"), default: "`[]`", meaning: "your addresses: their mail is yours only when your server's `Authentication-Results` says DKIM or SPF passed for their domain" },
      { key: k("dmPolicy"), default: "`disabled`", meaning: "other senders: `disabled` (ignored: no answer, no cost), `allowlist` or `pairing`" },
      { key: k("maxPendingPairings"), default: "`3`", meaning: "pairing codes that may wait for your approval at once" },
      { key: k("allowFrom"), default: "`[]`", meaning: "addresses that may write without pairing, each a shared conversation (never your private files)" },
      { key: k("dmRateLimit"), default: '`{ "perSender": 30, "window": "1h" }`', meaning: "mails per allowed person per window; `0` is no limit" },
      { key: k("queueMode"), default: "`null`", meaning: "overrides `agent.queueMode` for this channel" },
    ],
  },
  packages: ["imapflow@2.10.2", "nodemailer@10.6.1", "mailparser@3.14.2"],
  credentials: [{ variable: "EMAIL_PASSWORD", key: "password", source: "your provider's app password (docs/channels/email.md)" }],
  access: (c) => ({
    ownerIds: c.ownerAddresses,
    dmPolicy: c.dmPolicy,
    allowFrom: c.allowFrom,
    groups: NO_GROUPS,
    dmRateLimit: c.dmRateLimit,
    queueMode: c.queueMode,
  }),
  // An address is a person (a new thread to them); `<message-id>` is a thread, the chat of its mails.
  chats: { label: "<address>", pattern: /^(?:[^\s@<>]+@[^\s@<>]+|<[^\s<>]+>)$/, kind: (id) => (id.startsWith("<") ? "unknown" : "person") },
  ownerIdHint: "your own email address",
  ownerKey: "ownerAddresses",
  check(c) {
    const missing = problemOf(c);
    if (missing) return [{ ok: false, detail: missing, fix: `set it in channels.email (docs/channels/email.md)` }];
    const s = serversOf(c);
    const checks: ChannelCheck[] = [{ ok: true, detail: `reads ${s.imap.user} at ${s.imap.host}:${s.imap.port} (${c.imap.folder}), sends through ${s.smtp.host}:${s.smtp.port}` }];
    if (!c.authservId) checks.push({ ok: false, detail: "no authservId: no mail counts as the owner's", fix: `set ${k("authservId")} (docs/channels/email.md)` });
    return checks;
  },
  // Setup asks where the mailbox is and its password, checks both servers, and finds the owner
  // and their server by a mail carrying a one-time code (link.ts, handshake.ts).
  linkSetup: {
    offer: "Connect a mailbox (email)?",
    offerDefault: false,
    async run(ui, _home, waitMs) {
      const { linkEmail } = await import("./link.ts");
      return linkEmail(ui, waitMs);
    },
  },
  async checkOnline(c) {
    const { checkMailAccounts } = await import("./check.ts");
    return checkMailAccounts(c);
  },
  async create(c, deps) {
    const missing = problemOf(c);
    if (missing) throw new Error(`${missing}: set it in channels.email (docs/channels/email.md)`);
    const { createEmailChannel } = await import("./channel.ts");
    return createEmailChannel(c, { log: deps.log, home: deps.home });
  },
};

/** The presets, for setup and docs/channels/email.md. */
export { PROVIDERS };
