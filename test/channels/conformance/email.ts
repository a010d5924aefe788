// Email as a fake platform: real servers (test/support/mail-servers.ts), the daemon's real
// imapflow and nodemailer. People write through the SMTP server logged in as themselves (so the
// server vouches for them); what they see is their mailbox there. A person's "chat" is every mail
// Hearth sent them; each mail they write starts a thread, and a numbered choice is answered by a
// reply to the question's mail (In-Reply-To it). A labelled private chat is one thread, "Rooms",
// every mail of which replies to its first; a member joins it by being in the Cc of its next
// mails. The connection that breaks is Hearth's IMAP one.
import nodemailer from "nodemailer";
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { waitFor, type Daemon } from "../../support/daemon.ts";
import { AUTHSERV_ID, PASSWORD, startMailServers, type MailServers, type ReceivedMail } from "../../support/mail-servers.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";
import { numberedChoices } from "./signal.ts";

export const EMAIL_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("email")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: true,
  answersInWords: true,
  privateChatsGrow: true,
};

export const EMAIL_OWNER: Person = { role: "owner", id: "ann@owner.test", name: "Ann" };

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
  cc?: string[];
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
  /** The labelled chats: their thread's first Message-ID and who is in their Cc. */
  const labelled = new Map<string, { root: string; cc: Set<string> }>();
  const labelKey = (chat: Extract<ChatRef, { kind: "dm" }>) => `${chat.with.id}\0${chat.label}`;
  const rootOf = (m: ReceivedMail) => m.references[0] ?? m.messageId;
  const roots = () => new Set([...labelled.values()].map((t) => t.root));
  const mailsTo = (chat: ChatRef): ReceivedMail[] => {
    if (chat.kind !== "dm") return [];
    const mine = servers.received.filter((m) => m.to === chat.with.id);
    if (!chat.label) return mine.filter((m) => !roots().has(rootOf(m)));
    const root = labelled.get(labelKey(chat))?.root;
    return mine.filter((m) => root !== undefined && rootOf(m) === root);
  };
  const view = (m: ReceivedMail, all: ReceivedMail[]): BotMessage => {
    // A question's choices are gone once its outcome came into its thread: its text and the outcome, no choices.
    const asked = numberedChoices(m.text.trimEnd());
    const settled = asked !== null && all.slice(all.indexOf(m) + 1).some((o) => rootOf(o) === rootOf(m) && o.text.startsWith(`${asked.question}\n\n`) && numberedChoices(o.text.trimEnd()) === null);
    return { id: m.messageId, text: m.text, versions: [m.text], choices: asked && !settled ? asked.choices : [] };
  };
  const mailIn = (chat: ChatRef, id: string): ReceivedMail => {
    const mail = mailsTo(chat).find((m) => m.messageId === id);
    if (!mail) throw new Error(`no mail ${id} in the chat`);
    return mail;
  };
  /** `by` answers `mail` (In-Reply-To it), quoting it below the answer as mail programs do. */
  const answer = (mail: ReceivedMail, text: string, by: Person, parent = mail.messageId) =>
    mailFrom(servers, by, {
      subject: mail.subject.startsWith("Re:") ? mail.subject : `Re: ${mail.subject}`,
      text: `${text}\n\nOn Saturday, Hearth wrote:\n> ${mail.text.split("\n").join("\n> ")}\n`,
      inReplyTo: parent,
      references: parent === mail.messageId ? [...mail.references, mail.messageId] : [rootOf(mail)],
    });
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
      if (chat.label) {
        const t = labelled.get(labelKey(chat));
        const cc = t && t.cc.size > 0 ? { cc: [...t.cc] } : {};
        const id = await mailFrom(servers, from, { subject: "Rooms", text, ...cc, ...(t ? { inReplyTo: t.root, references: [t.root] } : {}), ...(attachments.length ? { attachments } : {}) });
        if (!t) labelled.set(labelKey(chat), { root: id, cc: new Set() });
        return;
      }
      await mailFrom(servers, from, { subject: `Conformance ${++threads}`, text, ...(attachments.length ? { attachments } : {}) });
      return;
    },
    botMessages: (chat) => {
      const all = mailsTo(chat);
      return all.map((m) => view(m, all));
    },
    deletedMessages: () => [],
    async choose(chat, message, label, by) {
      const mail = mailIn(chat, message.id);
      const number = message.choices.indexOf(label) + 1;
      if (number === 0) throw new Error(`no choice "${label}" in ${JSON.stringify(message.choices)}`);
      const count = mailsTo(chat).length;
      await answer(mail, String(number), by);
      if (by.role === "owner") await waitFor("the question to be settled", () => mailsTo(chat).length > count);
      return "";
    },
    async replyTo(chat, message, text, by) {
      await answer(mailIn(chat, message.id), text, by);
    },
    async writeBeside(chat, message, text, by) {
      // Into the question's thread, answering its first mail: the person's own, which started it.
      const mail = mailIn(chat, message.id);
      await answer(mail, text, by, rootOf(mail));
    },
    sentFiles: () => [],
    async addMember(chat, person) {
      const t = chat.kind === "dm" && chat.label ? labelled.get(labelKey(chat)) : undefined;
      if (!t) throw new Error("a member joins a labelled chat's thread after its first mail");
      t.cc.add(person.id);
    },
    async removeMember(chat, person) {
      if (chat.kind === "dm" && chat.label) labelled.get(labelKey(chat))?.cc.delete(person.id);
    },
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
