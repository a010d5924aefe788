// `hearth setup`'s owner handshake for email: who the owner is and which server vouches for them,
// learned from one mail. The wizard shows a one-time code (../owner-code.ts); the owner sends a
// mail carrying it in the subject to Hearth's mailbox from their own address. The first such mail
// names the owner by its From: address, and its topmost Authentication-Results header (the one
// Hearth's receiving server added last) names that server: its authserv-id becomes `authservId`.
// That header must itself say DKIM or SPF passed for the From: domain (auth-results.ts, the
// adapter's own rule): an owner the daemon would not recognise later is refused now, with why.
// The folder is opened read-only and watched with IDLE; the mail is left as it was.
import { ImapFlow } from "imapflow";
import { printable } from "../printable.ts";
import { parseAuthenticationResults, vouchedFor } from "./auth-results.ts";
import type { Account } from "./servers.ts";

/** The owner as the code mail names them. */
export interface MailOwner {
  address: string;
  name: string;
  /** The authserv-id of the topmost Authentication-Results header. */
  authservId: string;
  /** What that header says passed ("dkim=pass for owner.test"). */
  by: string;
}

export type MailHandshake = { kind: "owner"; owner: MailOwner } | { kind: "timeout" } | { kind: "failed"; problem: string };

export interface MailHandshakeOptions {
  code: string;
  folder: string;
  /** Counts from `ready`. */
  waitMs: number;
  /** Called once the folder is watched: ask the owner to send the mail only then. */
  ready(): void;
  /** Whether the owner confirms `owner` as themselves and its server as theirs; false waits for another mail. */
  accept(owner: MailOwner): Promise<boolean>;
  /** Hears of each new mail without the code (its sender's address, printable). */
  ignored(from: string): void;
}

/** Whether a subject carries `code` as one of its words (case forgiven): "Re: ABCD2345" does. */
export function subjectCarriesCode(subject: string, code: string): boolean {
  return subject.toUpperCase().split(/[^A-Z0-9]+/).includes(code);
}

/** The values of the Authentication-Results fields of a header block, top first, unfolded. */
export function authResultsOf(headerBlock: string): string[] {
  return headerBlock
    .split(/\r?\n(?![ \t])/)
    .filter((f) => /^authentication-results\s*:/i.test(f))
    .map((f) => f.slice(f.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim());
}

/**
 * Judges the code mail: the owner it names, or why it cannot name anyone (one sentence, ending
 * in what to do). `headers`: its Authentication-Results values, top first.
 */
export function judgeCodeMail(from: { address: string; name: string }, headers: readonly string[]): { ok: true; owner: MailOwner } | { ok: false; problem: string } {
  const address = from.address.toLowerCase();
  const top = headers[0] === undefined ? null : parseAuthenticationResults(headers[0]);
  const cannot = "Hearth could not tell your mail from a forged one";
  if (!top)
    return {
      ok: false,
      problem: `the mail with the code from ${address} carries no Authentication-Results header that reads, so ${cannot}; Hearth's mailbox must be at a provider that checks DKIM and SPF (docs/channels/email.md)`,
    };
  const vouched = vouchedFor(headers, top.authservId, address);
  if (!vouched.ok)
    return {
      ok: false,
      problem: `the mail with the code from ${address} is not vouched for (${vouched.why}), so ${cannot}; send it from your own provider's server, which signs it with DKIM or passes SPF for your domain (docs/channels/email.md)`,
    };
  return { ok: true, owner: { address, name: from.name, authservId: top.authservId, by: vouched.by } };
}

/** Watches `account`'s folder for the code mail; never throws (a lost connection is `failed`). */
export async function findOwnerByMail(account: Account, pass: string, o: MailHandshakeOptions): Promise<MailHandshake> {
  // IDLE half a second after each fetch (imapflow's default waits 15 s), so the code mail is seen at once.
  const client = new ImapFlow({ host: account.host, port: account.port, secure: account.secure, auth: { user: account.user, pass }, logger: false, autoIdleDelay: 500 });
  let settle!: (h: MailHandshake) => void;
  const done = new Promise<MailHandshake>((r) => (settle = r));
  let next = 0;
  let reading = Promise.resolve();
  let over = false;
  let timer: NodeJS.Timeout | undefined;
  let deadline = 0;
  const finish = (h: MailHandshake) => {
    if (over) return;
    over = true;
    settle(h);
  };

  const readNew = async (): Promise<void> => {
    if (over) return;
    const mails = [];
    for await (const m of client.fetch(`${next}:*`, { uid: true, envelope: true, headers: ["authentication-results"] }, { uid: true })) if (m.uid >= next) mails.push(m);
    for (const m of mails.sort((a, b) => a.uid - b.uid)) {
      next = m.uid + 1;
      if (over) return;
      const senders = m.envelope?.from ?? [];
      const sender = senders.length === 1 && senders[0]!.address ? { address: printable(senders[0]!.address.toLowerCase()), name: printable(senders[0]!.name?.trim() || senders[0]!.address) } : null;
      if (!sender || !subjectCarriesCode(m.envelope?.subject ?? "", o.code)) {
        o.ignored(sender?.address ?? "(no single sender)");
        continue;
      }
      const judged = judgeCodeMail(sender, authResultsOf(m.headers?.toString("utf8") ?? ""));
      if (!judged.ok) return finish({ kind: "failed", problem: judged.problem });
      // The wait stops while the owner answers: a timeout must not leave the question open.
      const left = deadline - Date.now();
      clearTimeout(timer);
      const accepted = await o.accept(judged.owner);
      if (accepted) return finish({ kind: "owner", owner: judged.owner });
      if (over) return;
      deadline = Date.now() + Math.max(left, 0);
      timer = setTimeout(() => finish({ kind: "timeout" }), Math.max(left, 0));
    }
  };
  const read = () => {
    reading = reading.then(readNew).catch((err: Error) => finish({ kind: "failed", problem: `reading ${o.folder} at ${account.host} failed: ${err.message}` }));
  };

  client.on("error", () => undefined);
  client.on("close", () => finish({ kind: "failed", problem: `the IMAP connection to ${account.host} closed while waiting for the mail; run setup again` }));
  try {
    await client.connect();
    const box = await client.mailboxOpen(o.folder, { readOnly: true });
    next = box.uidNext;
    client.on("exists", read);
    deadline = Date.now() + o.waitMs;
    timer = setTimeout(() => finish({ kind: "timeout" }), o.waitMs);
    o.ready();
    read();
    return await done;
  } catch (err) {
    return { kind: "failed", problem: `IMAP at ${account.host}:${account.port}: ${(err as Error).message}` };
  } finally {
    over = true;
    clearTimeout(timer);
    await client.logout().catch(() => client.close());
  }
}
