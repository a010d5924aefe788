// `hearth doctor --online` for email: the IMAP login (and the folder) and the SMTP login, each
// tried once. Loaded only by doctor: it imports the mail libraries.
import { ImapFlow } from "imapflow";
import nodemailer from "nodemailer";
import type { ChannelCheck } from "../descriptor.ts";
import type { EmailConfig } from "./descriptor.ts";
import { serversOf } from "./servers.ts";

export async function checkMailAccounts(c: EmailConfig): Promise<ChannelCheck> {
  const s = serversOf(c);
  const pass = c.password ?? "";
  const client = new ImapFlow({ host: s.imap.host, port: s.imap.port, secure: s.imap.secure, auth: { user: s.imap.user, pass }, logger: false });
  try {
    await client.connect();
    await client.mailboxOpen(c.imap.folder, { readOnly: true });
    const idle = client.capabilities.has("IDLE");
    await client.logout();
    if (!idle) return { ok: false, detail: `${s.imap.host} does not offer IMAP IDLE`, fix: "use another IMAP server; Hearth watches the folder with IDLE" };
  } catch (err) {
    client.close();
    const e = err as { authenticationFailed?: boolean; message?: string };
    return { ok: false, detail: e.authenticationFailed ? `${s.imap.host} refused the login of ${s.imap.user}` : `IMAP at ${s.imap.host}:${s.imap.port}: ${e.message ?? String(err)}`, fix: "check channels.email.imap and EMAIL_PASSWORD (an app password)" };
  }
  const smtp = nodemailer.createTransport({ host: s.smtp.host, port: s.smtp.port, secure: s.smtp.secure, auth: { user: s.smtp.user, pass }, connectionTimeout: 15_000 });
  try {
    await smtp.verify();
  } catch (err) {
    return { ok: false, detail: `SMTP at ${s.smtp.host}:${s.smtp.port}: ${(err as Error).message}`, fix: "check channels.email.smtp and EMAIL_PASSWORD" };
  } finally {
    smtp.close();
  }
  return { ok: true, detail: `IMAP ${s.imap.host} (${c.imap.folder}, IDLE) and SMTP ${s.smtp.host} accept ${s.imap.user}` };
}
