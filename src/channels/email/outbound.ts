// An answer as a mail: plain text and the same words as simple HTML (paragraphs and line breaks,
// everything escaped), the subject kept with "Re:", In-Reply-To and References set so every
// client shows it in its thread. Nothing of the mail answered is quoted.
//
// A mail that is part of an answer has a Message-ID derived from its journal key (the answer's
// inbox id and the part's index): sent again after a crash between the sending and the server's
// 250, it is the same mail again — a mailbox that keys its mail by Message-ID (Gmail) keeps one,
// and every client threads it as one. SMTP cannot ask whether a mail was taken already.
import { createHash } from "node:crypto";
import type { Thread } from "./state.ts";

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function simpleHtml(text: string): string {
  const paragraphs = text.trim().split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, "<br>\n")}</p>`);
  return `<!doctype html><html><body>\n${paragraphs.join("\n")}\n</body></html>\n`;
}

export const replySubject = (subject: string): string => (/^re:/i.test(subject.trim()) ? subject.trim() : `Re: ${subject.trim() || "(no subject)"}`);

const domainOf = (from: string) => from.slice(from.lastIndexOf("@") + 1);

/** A Message-ID of Hearth's own, in the sending address's domain. */
export const newMessageId = (from: string): string => `<hearth.${Date.now().toString(36)}.${crypto.randomUUID().slice(0, 13)}@${domainOf(from)}>`;

/** The Message-ID of the mail `key` names (SendMeta.messageKey), the same every time it is sent from `from`. */
export const keyedMessageId = (key: string, from: string): string => `<hearth.${createHash("sha256").update(`${from}\n${key}`).digest("hex").slice(0, 32)}@${domainOf(from)}>`;

/** The Message-ID of a mail sent from `from`: derived from `key` when it has one. */
const messageIdOf = (from: string, key: string | undefined) => (key === undefined ? newMessageId(from) : keyedMessageId(key, from));

/** Whether `messageId` has the form of Hearth's own (newMessageId, keyedMessageId) for the address `from`. */
export const isOwnMessageId = (messageId: string, from: string): boolean => messageId.startsWith("<hearth.") && messageId.toLowerCase().endsWith(`@${domainOf(from).toLowerCase()}>`);

/** An answer into `thread`; `key`: the stable name of this mail (SendMeta.messageKey). */
export function answerMail(thread: Thread, text: string, from: string, key?: string): OutgoingMail {
  return {
    to: thread.to,
    subject: replySubject(thread.subject),
    text: `${text.trim()}\n`,
    html: simpleHtml(text),
    messageId: messageIdOf(from, key),
    inReplyTo: thread.last,
    references: thread.references,
  };
}

/** A mail that starts a thread (a cron job's result, the heartbeat). */
export function newMail(to: string, text: string, from: string, sentBy: string, key?: string): OutgoingMail {
  const firstLine = text.trim().split("\n")[0] ?? "";
  const subject = sentBy === "Hearth" ? `Hearth: ${firstLine.slice(0, 60)}` : `Hearth: ${sentBy}`;
  return { to, subject, text: `${text.trim()}\n`, html: simpleHtml(text), messageId: messageIdOf(from, key) };
}
