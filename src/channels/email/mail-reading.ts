// A fetched mail read into what the channel needs: who it is from (and whether the owner's server
// vouches for it), which thread it belongs to, its words and its files. The MIME structure is
// read with mailparser without its HTML conversions; an HTML-only body is turned into text in the
// bounded parse pool (src/parse/), never on the daemon's main thread.
import { simpleParser, type ParsedMail } from "mailparser";
import { stripTags } from "../../parse/html-scan.ts";
import { HTML_TIMEOUT_MS, parsePool } from "../../parse/pool.ts";
import type { Attachment } from "../channel.ts";
import { printable } from "../printable.ts";

export interface Mail {
  /** With angle brackets, as in the header; made up from the UID when the mail has none. */
  messageId: string;
  /** The thread's first mail as its References name it (this mail itself when it starts one). */
  root: string;
  references: string[];
  /** The mail it answers: its In-Reply-To, else the last of its References; undefined for a mail that starts a thread. */
  parent?: string;
  /** The subject and the sender's name and address as printable text (printable.ts). */
  subject: string;
  from: { address: string; name: string } | null;
  /** The addresses in To and Cc (lower case, printable), in the order they stand: who else the mail went to. */
  recipients: string[];
  /** The Authentication-Results header values, top first, as they stand in the mail. */
  authResults: string[];
  /**
   * Headers RFC 5322 allows once that the mail has more than once ("subject", "from"), in the
   * order they first appear; [] for a mail that follows the grammar. Which of two Subject lines
   * a signature covered, and which one a client shows, cannot be told: such a mail is not read.
   */
  repeated: string[];
  /** Whether the mail says it was sent by a program (Auto-Submitted, a bulk Precedence): never answered. */
  automatic: boolean;
  text: string;
  html: string | null;
  files: Array<{ name: string; mime: string; content: Buffer }>;
}

/** The most of a mail's words the model is given. */
const MAX_TEXT_CHARS = 100_000;
const MESSAGE_ID = /<[^<>\s]+>/g;
/** The header fields RFC 5322 (§3.6) allows at most once in a message. */
const ONCE = new Set(["date", "from", "sender", "reply-to", "to", "cc", "bcc", "message-id", "in-reply-to", "references", "subject"]);
const addresses = (v: ParsedMail["to"]): string[] =>
  (Array.isArray(v) ? v : v ? [v] : []).flatMap((o) => flatten(o.value)).map((a) => printable(a.toLowerCase()));
/** A group ("team: a@x, b@y;") stands for its members. */
const flatten = (list: Array<{ address?: string; group?: Array<{ address?: string; group?: unknown }> }>): string[] =>
  list.flatMap((a) => (a.group ? flatten(a.group as typeof list) : a.address ? [a.address] : []));
const ids = (v: string | string[] | undefined): string[] => (Array.isArray(v) ? v : v ? [v] : []).flatMap((s) => s.match(MESSAGE_ID) ?? []);

/** A header line is at most 998 characters (RFC 5322): a longer Message-ID names nothing Hearth sent. */
const MAX_ID_CHARS = 998;
const parentOf = (inReplyTo: string | undefined, references: string[]): { parent?: string } => {
  const parent = inReplyTo ?? references.at(-1);
  return parent !== undefined && parent.length <= MAX_ID_CHARS ? { parent } : {};
};

/** Parses a raw mail (bounded by the caller's size limit). `fallbackId`: the Message-ID of a mail without one. */
export async function readMail(source: Buffer, fallbackId: string): Promise<Mail> {
  const parsed: ParsedMail = await simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
  const messageId = ids(parsed.messageId)[0] ?? fallbackId;
  const references = ids(parsed.references);
  const inReplyTo = ids(parsed.inReplyTo)[0];
  const chain = references.length > 0 ? references : inReplyTo ? [inReplyTo] : [];
  const sender = parsed.from?.value.length === 1 ? parsed.from.value[0] : undefined;
  const header = (key: string) => parsed.headerLines.filter((h) => h.key === key).map((h) => h.line.slice(h.line.indexOf(":") + 1).trim());
  const counts = new Map<string, number>();
  for (const h of parsed.headerLines) if (ONCE.has(h.key)) counts.set(h.key, (counts.get(h.key) ?? 0) + 1);
  const autoSubmitted = header("auto-submitted")[0]?.toLowerCase();
  const precedence = header("precedence")[0]?.toLowerCase();
  return {
    messageId,
    root: chain[0] ?? messageId,
    references: inReplyTo && !chain.includes(inReplyTo) ? [...chain, inReplyTo] : chain,
    ...(parentOf(inReplyTo, references)),
    subject: printable((parsed.subject ?? "").trim()),
    from: sender?.address ? { address: printable(sender.address.toLowerCase()), name: printable(sender.name?.trim() || sender.address) } : null,
    recipients: [...addresses(parsed.to), ...addresses(parsed.cc)],
    authResults: header("authentication-results"),
    repeated: [...counts].filter(([, n]) => n > 1).map(([key]) => key),
    automatic: (autoSubmitted !== undefined && autoSubmitted !== "no") || precedence === "bulk" || precedence === "junk" || precedence === "list",
    text: parsed.text ?? "",
    html: typeof parsed.html === "string" ? parsed.html : null,
    files: parsed.attachments.filter((a) => !a.related).map((a) => ({ name: a.filename ?? "attachment", mime: a.contentType, content: a.content })),
  };
}

/**
 * The words of a mail: its text part, else its HTML part read in the parse pool. The quoted
 * mail an answer ends with (a reply's "On … wrote:" and its "> " lines) is left out: the
 * conversation already has it.
 */
export async function wordsOf(mail: Mail): Promise<string> {
  let text = mail.text;
  if (!text.trim() && mail.html) {
    const r = await parsePool().run({ type: "html", html: mail.html }, { timeoutMs: HTML_TIMEOUT_MS });
    switch (r.type) {
      case "html":
        text = r.text;
        break;
      case "too-complex":
      case "failed": {
        // As a web page: the reason, then its words without markup (one linear pass).
        const why = r.type === "too-complex" ? `it is too complex to extract (${r.reason})` : `it could not be read (${r.message})`;
        const words = stripTags(mail.html, MAX_TEXT_CHARS);
        return `[The mail's HTML ${why}; here is its text, without markup.]\n\n${words.text}${words.cut ? "\n[…cut]" : ""}`;
      }
      case "pdf":
        return "";
    }
  }
  const words = withoutQuotedTail(text).trim();
  return words.length > MAX_TEXT_CHARS ? `${words.slice(0, MAX_TEXT_CHARS)}\n[…cut]` : words;
}

/** Drops the trailing block of "> " lines and the "On … wrote:" line before it. */
export function withoutQuotedTail(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === "") end--;
  let cut = end;
  while (cut > 0 && (lines[cut - 1]!.startsWith(">") || lines[cut - 1]!.trim() === "")) cut--;
  if (cut === end) return lines.slice(0, end).join("\n");
  if (cut > 0 && /wrote:\s*$/.test(lines[cut - 1]!)) cut--;
  return lines.slice(0, cut).join("\n");
}

class FileTooLargeError extends Error {
  readonly tooLarge = true;
}

/** The files of a mail as the gateway takes them: already here, handed over within the caller's limit. */
export function attachmentsOf(mail: Mail): Attachment[] {
  return mail.files.map((f) => ({
    kind: f.mime.startsWith("image/") ? "image" : f.mime.startsWith("audio/") ? "audio" : f.mime.startsWith("video/") ? "video" : "document",
    name: f.name,
    mime: f.mime,
    size: f.content.length,
    fetch: async (maxBytes: number) => {
      if (f.content.length > maxBytes) throw new FileTooLargeError(`${f.name} is larger than ${maxBytes} bytes`);
      return new Uint8Array(f.content);
    },
  }));
}
