// The mail accounts tried once each, for `hearth setup` and `hearth doctor --online`: the IMAP
// login, the folder and IDLE (Hearth watches with it), then the SMTP login. Loaded only by those
// two: it imports the mail libraries. A result value always; never the password in a message.
import { ImapFlow } from "imapflow";
import nodemailer from "nodemailer";
import type { ChannelCheck } from "../descriptor.ts";
import type { EmailConfig } from "./config.ts";
import { serversOf, type Account } from "./servers.ts";

/** What failed: the IMAP login, IDLE missing, or the SMTP login; `problem` says it in one clause. */
export type AccountsCheck = { ok: true; detail: string } | { ok: false; side: "imap" | "idle" | "smtp"; problem: string };

export async function checkAccounts(s: { imap: Account; smtp: Account }, pass: string, folder: string): Promise<AccountsCheck> {
  const client = new ImapFlow({ host: s.imap.host, port: s.imap.port, secure: s.imap.secure, auth: { user: s.imap.user, pass }, logger: false });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.mailboxOpen(folder, { readOnly: true });
    const idle = client.capabilities.has("IDLE");
    await client.logout();
    if (!idle) return { ok: false, side: "idle", problem: `${s.imap.host} does not offer IMAP IDLE` };
  } catch (err) {
    client.close();
    const e = err as { authenticationFailed?: boolean; message?: string };
    return { ok: false, side: "imap", problem: e.authenticationFailed ? `${s.imap.host} refused the login of ${s.imap.user}` : `IMAP at ${s.imap.host}:${s.imap.port}: ${e.message ?? String(err)}` };
  }
  const smtp = nodemailer.createTransport({ host: s.smtp.host, port: s.smtp.port, secure: s.smtp.secure, auth: { user: s.smtp.user, pass }, connectionTimeout: 15_000 });
  try {
    await smtp.verify();
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { ok: false, side: "smtp", problem: e.code === "EAUTH" ? `${s.smtp.host} refused the SMTP login of ${s.smtp.user}` : `SMTP at ${s.smtp.host}:${s.smtp.port}: ${e.message ?? String(err)}` };
  } finally {
    smtp.close();
  }
  return { ok: true, detail: `IMAP ${s.imap.host} (${folder}, IDLE) and SMTP ${s.smtp.host} accept ${s.imap.user}` };
}

const FIXES = {
  imap: "check channels.email.imap and EMAIL_PASSWORD (an app password)",
  idle: "use another IMAP server; Hearth watches the folder with IDLE",
  smtp: "check channels.email.smtp and EMAIL_PASSWORD",
} as const;

/** `hearth doctor --online`: the section's accounts. */
export async function checkMailAccounts(c: EmailConfig): Promise<ChannelCheck> {
  const r = await checkAccounts(serversOf(c), c.password ?? "", c.imap.folder);
  return r.ok ? { ok: true, detail: r.detail } : { ok: false, detail: r.problem, fix: FIXES[r.side] };
}
