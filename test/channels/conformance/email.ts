// Email as a fake platform: real servers (test/support/mail-servers.ts), the daemon's real
// imapflow and nodemailer. People write through the SMTP server logged in as themselves (so the
// server vouches for them); what they see is their mailbox there. A person's "chat" is every mail
// Hearth sent them; each mail they write starts a thread, and a numbered choice is answered by a
// reply into the question's thread. The connection that breaks is Hearth's IMAP one.
import nodemailer from "nodemailer";
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { waitFor, type Daemon } from "../../support/daemon.ts";
import { AUTHSERV_ID, PASSWORD, startMailServers, type MailServers, type ReceivedMail } from "../../support/mail-servers.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";

export const EMAIL_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("email")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: true,
};

export const EMAIL_OWNER: Person = { role: "owner", id: "ann@owner.test", name: "Ann" };
const NUMBERED = /^(\d+)\. (.+)$/;

/** The numbered choices a question mail offers ([] for any other mail). */
const choicesOf = (text: string): string[] =>
  /Reply with a number/.test(text)
    ? text
        .split("\n")
        .map((l) => NUMBERED.exec(l.trim()))
        .filter((m) => m !== null)
        .map((m) => m[2]!)
    : [];

export async function startEmailPlatform(): Promise<FakePlatform> {
  return emailPlatform(await startMailServers());
}

/** The email section a daemon runs with against `servers`. */
export function emailSection(servers: MailServers, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    address: servers.bot.address,
    imap: { host: "127.0.0.1", port: servers.imapProxyPort, secure: false },
    smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false },
    authservId: AUTHSERV_ID,
    ownerAddresses: [EMAIL_OWNER.id],
    ...extra,
  };
}

/** A mail a person writes to Hearth. */
export interface PersonMail {
  subject: string;
  text?: string;
  messageId?: string;
  html?: string;
  inReplyTo?: string;
  references?: string[];
  headers?: Record<string, string>;
  attachments?: Array<{ filename: string; content: Buffer; contentType: string }>;
}

/**
 * Writes as `from` to Hearth, logged in as themselves (so the server vouches for them), or, with
 * `login: false`, as anyone may: without logging in. Resolves with the mail's Message-ID once
 * Hearth's folder has it.
 */
export async function mailFrom(servers: MailServers, from: Pick<Person, "id" | "name">, mail: PersonMail, opts: { login?: boolean } = {}): Promise<string> {
  const t = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false, ...(opts.login === false ? {} : { auth: { user: from.id, pass: PASSWORD } }) });
  try {
    const info = await t.sendMail({ from: `"${from.name}" <${from.id}>`, to: servers.bot.address, ...mail });
    return info.messageId;
  } finally {
    t.close();
  }
}

export function emailPlatform(servers: MailServers): FakePlatform {
  let people = 0;
  let threads = 0;
  const mailsTo = (chat: ChatRef): ReceivedMail[] => (chat.kind === "dm" ? servers.received.filter((m) => m.to === chat.with.id) : []);
  const view = (m: ReceivedMail, all: ReceivedMail[]): BotMessage => {
    // A question's choices are gone once a later mail came into its thread (how it was settled).
    const root = m.references[0] ?? m.messageId;
    const later = all.slice(all.indexOf(m) + 1).some((o) => (o.references[0] ?? o.messageId) === root);
    return { id: m.messageId, text: m.text, versions: [m.text], choices: later ? [] : choicesOf(m.text) };
  };
  return {
    name: "email",
    capabilities: EMAIL_TRAITS.capabilities,
    daemonSetup: () => ({ channels: { email: emailSection(servers, { dmPolicy: "pairing" }) }, env: { EMAIL_PASSWORD: servers.bot.password } }),
    connected: (d: Daemon) => waitFor("the email channel to watch the folder", () => d.log().includes('"email.watching"')),
    person(role: Role): Person {
      if (role === "owner") return EMAIL_OWNER;
      people++;
      return { role, id: `sam${people}@stranger${people}.test`, name: `Sam${people}` };
    },
    async send(chat, from, text, opts = {}) {
      if (chat.kind === "group") throw new Error("email has no group chats");
      const attachments = (opts.files ?? []).map((f) => ({ filename: f.name, content: Buffer.from(f.bytes), contentType: f.mime }));
      await mailFrom(servers, from, { subject: `Conformance ${++threads}`, text, ...(attachments.length ? { attachments } : {}) });
      return;
    },
    botMessages: (chat) => {
      const all = mailsTo(chat);
      return all.map((m) => view(m, all));
    },
    deletedMessages: () => [],
    async choose(chat, message, label, by) {
      const all = mailsTo(chat);
      const mail = all.find((m) => m.messageId === message.id);
      if (!mail) throw new Error(`no mail ${message.id} in the chat`);
      const number = message.choices.indexOf(label) + 1;
      if (number === 0) throw new Error(`no choice "${label}" in ${JSON.stringify(message.choices)}`);
      const count = all.length;
      await mailFrom(servers, by, {
        subject: mail.subject.startsWith("Re:") ? mail.subject : `Re: ${mail.subject}`,
        text: `${number}\n\nOn Saturday, Hearth wrote:\n> ${mail.text.split("\n").join("\n> ")}\n`,
        inReplyTo: mail.messageId,
        references: [...mail.references, mail.messageId],
      });
      if (by.role === "owner") await waitFor("the question to be settled", () => mailsTo(chat).length > count);
      return "";
    },
    sentFiles: () => [],
    holdDelivery: (text) => servers.hold(text),
    holdAnswer: (text) => servers.holdAnswer(text),
    async loseConnection() {
      await servers.cut();
    },
    async restoreConnection() {
      servers.restore();
    },
    close: () => servers.stop(),
  };
}
