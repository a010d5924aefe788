// Real mail servers for the email channel's tests, on loopback ports, one set per test file:
// - Dovecot (the Debian package dovecot-imapd) for IMAP, with a config file of its own and every
//   folder it writes in a temp folder. Run as root (as CI runs), its login and internal services
//   run as `dovenull`/`dovecot` and the mail user is uid 65534 (Dovecot refuses root for both).
//   Not run as root, every service and the mail user are the current user and the login and
//   anvil services are not chrooted (chroot needs root): Dovecot then needs no privilege at all.
// - The `smtp-server` package as the one SMTP server everyone uses. It plays the owner's own
//   receiving server: a mail for Hearth's address gets the Authentication-Results header that
//   server would add (authserv-id `mx.test`; dkim=pass for the From: domain when the session
//   logged in as the From: address, else spf=fail) and is appended over IMAP into Dovecot; a
//   mail for anyone else is kept, as that person's mailbox (what the tests read Hearth's answers
//   from), one mail per Message-ID as Gmail keeps it: a mail sent again with the Message-ID it
//   had is the same mail.
// - A TCP proxy in front of Dovecot's IMAP port, so a test can cut Hearth's connection.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { waitFor } from "./daemon.ts";

export const DOVECOT = "/usr/sbin/dovecot";
export const AUTHSERV_ID = "mx.test";
/** Everyone's SMTP password (the test server checks only that the login names a person). */
export const PASSWORD = "pw-test-1";

/** Why the mail tests cannot run here; undefined when they can. */
export function mailServersMissing(): string | undefined {
  if (!existsSync(DOVECOT)) return `Dovecot is not installed (${DOVECOT}; Debian package dovecot-imapd, which .ci/run installs when it can)`;
  return undefined;
}

/** A mail a person received (Hearth's answer), as their mailbox has it. */
export interface ReceivedMail {
  to: string;
  from: string;
  raw: Buffer;
  parsed: ParsedMail;
  messageId: string;
  inReplyTo: string | undefined;
  references: string[];
  subject: string;
  text: string;
  at: number;
}

export interface MailServers {
  /** Hearth's mailbox: its address (also its IMAP and SMTP login) and password. */
  readonly bot: { address: string; password: string };
  readonly imapPort: number;
  /** The proxy's port: what Hearth is configured with. */
  readonly imapProxyPort: number;
  readonly smtpPort: number;
  /** Mail delivered to people other than Hearth, in arrival order. */
  readonly received: ReceivedMail[];
  /** Appends `raw` to Hearth's folder as it is (no header added): a mail that reached the mailbox by another way. */
  appendRaw(raw: string | Buffer): Promise<void>;
  /** The IMAP flags of the mail in Hearth's folder whose Message-ID is `messageId` (null: no such mail). */
  flagsOf(messageId: string): Promise<string[] | null>;
  /** Holds the next mail for a person whose text (trimmed) is `text`: it is never delivered and the sender never hears back. Resolves once it arrived. */
  hold(text: string): Promise<void>;
  /** The next mail for a person whose text (trimmed) is `text` is delivered, but the sender never hears back (no 250). Resolves once it is in the mailbox. */
  holdAnswer(text: string): Promise<void>;
  /** Cuts every IMAP connection through the proxy and refuses new ones until `restore`. */
  cut(): Promise<void>;
  restore(): void;
  /** Dovecot's log so far. */
  dovecotLog(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const BOT = { address: "hearth@mail.test", password: "imap-secret-1" };

export async function startMailServers(): Promise<MailServers> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-mail-"));
  chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const me = userInfo();
  const mailUid = root ? 65534 : me.uid;
  const mailGid = root ? 65534 : me.gid;
  const maildir = join(dir, "mail", "hearth");
  mkdirSync(maildir, { recursive: true });
  chownSync(join(dir, "mail"), mailUid, mailGid);
  chownSync(maildir, mailUid, mailGid);
  const imapPort = await freePort();
  writeFileSync(join(dir, "passwd"), `${BOT.address}:{PLAIN}${BOT.password}:${mailUid}:${mailGid}::${maildir}::\n`);
  const conf = join(dir, "dovecot.conf");
  writeFileSync(
    conf,
    `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = ${root ? "dovenull" : me.username}
default_internal_user = ${root ? "dovecot" : me.username}
${root ? "" : `default_internal_group = ${execFileSync("id", ["-gn"]).toString().trim()}\n`}first_valid_uid = 1
# IDLE tells of mail another session appended within a second (where inotify does not reach).
mailbox_idle_check_interval = 1 secs
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = ${dir}/passwd
}
userdb {
  driver = passwd-file
  args = ${dir}/passwd
}
service imap-login {${root ? "" : "\n  chroot ="}
  inet_listener imap {
    address = 127.0.0.1
    port = ${imapPort}
  }
  inet_listener imaps {
    port = 0
  }
}
${root ? "" : "service anvil {\n  chroot =\n}\n"}service pop3-login {
  inet_listener pop3 {
    port = 0
  }
}
service stats {
  unix_listener stats-reader {
    mode = 0666
  }
  unix_listener stats-writer {
    mode = 0666
  }
}
`,
  );
  // In the foreground, as this process's child: stopped with it, its start-up errors on stderr.
  const dovecot = spawn(DOVECOT, ["-F", "-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  let dovecotErr = "";
  dovecot.stderr.on("data", (c: Buffer) => void (dovecotErr += c.toString()));
  const dovecotExited = new Promise<void>((r) => dovecot.once("exit", () => r()));
  const dovecotLog = () => (existsSync(join(dir, "dovecot.log")) ? readFileSync(join(dir, "dovecot.log"), "utf8") : "") + dovecotErr;
  const stopDovecot = async () => {
    if (dovecot.exitCode === null && dovecot.signalCode === null) dovecot.kill("SIGTERM");
    await dovecotExited;
  };

  // The test's own IMAP session, which appends what the SMTP server received for Hearth.
  const appender = new ImapFlow({ host: "127.0.0.1", port: imapPort, secure: false, auth: { user: BOT.address, pass: BOT.password }, logger: false });
  try {
    await waitFor("Dovecot to listen", () => new Promise<boolean>((r) => net.connect(imapPort, "127.0.0.1").once("connect", function (this: net.Socket) { this.destroy(); r(true); }).once("error", () => r(false))));
    await appender.connect();
  } catch (err) {
    await stopDovecot();
    throw new Error(`${(err as Error).message}\n${dovecotLog()}`);
  }
  let appending = Promise.resolve();
  const appendRaw = (raw: string | Buffer) => {
    const next = appending.then(async () => void (await appender.append("INBOX", raw)));
    appending = next.catch(() => undefined);
    return next;
  };

  // ── SMTP ──
  const received: ReceivedMail[] = [];
  const holds: Array<{ text: string; deliver: boolean; arrived: () => void }> = [];
  const smtp = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.password !== (auth.username === BOT.address ? BOT.password : PASSWORD)) return cb(new Error("Invalid username or password"));
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        void route(raw, session).then(
          (held) => (held ? undefined : cb()),
          (err: Error) => cb(err),
        );
      });
    },
  });
  const route = async (raw: Buffer, session: { user?: unknown; envelope: { mailFrom: false | { address: string }; rcptTo: Array<{ address: string }> } }): Promise<boolean> => {
    const parsed = await simpleParser(raw);
    const text = (parsed.text ?? "").trim();
    const at = holds.findIndex((h) => h.text === text);
    const hold = at >= 0 ? holds.splice(at, 1)[0] : undefined;
    if (hold && !hold.deliver) {
      hold.arrived();
      return true;
    }
    const from = parsed.from?.value[0]?.address?.toLowerCase() ?? "";
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : from;
    for (const rcpt of session.envelope.rcptTo) {
      const to = rcpt.address.toLowerCase();
      if (to === BOT.address) {
        const domain = from.slice(from.indexOf("@") + 1);
        const vouched = typeof session.user === "string" && session.user.toLowerCase() === from;
        const header = vouched
          ? `Authentication-Results: ${AUTHSERV_ID};\r\n\tdkim=pass (test signature) header.d=${domain} header.s=test;\r\n\tspf=pass smtp.mailfrom=${mailFrom}\r\n`
          : `Authentication-Results: ${AUTHSERV_ID};\r\n\tdkim=none (no signature);\r\n\tspf=fail smtp.mailfrom=${mailFrom}\r\n`;
        await appendRaw(Buffer.concat([Buffer.from(header), raw]));
      } else {
        const ids = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v ? [v] : []);
        if (parsed.messageId && received.some((m) => m.to === to && m.messageId === parsed.messageId)) continue;
        received.push({
          to,
          from,
          raw,
          parsed,
          messageId: parsed.messageId ?? "",
          inReplyTo: parsed.inReplyTo,
          references: ids(parsed.references),
          subject: parsed.subject ?? "",
          text,
          at: Date.now(),
        });
      }
    }
    hold?.arrived();
    return hold !== undefined;
  };
  const smtpPort = await freePort();
  await new Promise<void>((r) => smtp.listen(smtpPort, "127.0.0.1", r));

  // ── the proxy ──
  let cutOff = false;
  const live = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    if (cutOff) return void client.destroy();
    const upstream = net.connect(imapPort, "127.0.0.1");
    live.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      live.delete(client);
      live.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream).pipe(client);
  });
  const imapProxyPort = await freePort();
  await new Promise<void>((r) => proxy.listen(imapProxyPort, "127.0.0.1", r));

  return {
    bot: BOT,
    imapPort,
    imapProxyPort,
    smtpPort,
    received,
    appendRaw,
    flagsOf: async (messageId) => {
      const lock = await appender.getMailboxLock("INBOX");
      try {
        const all = await appender.fetchAll("1:*", { uid: true, flags: true, envelope: true });
        const found = all.find((m) => m.envelope?.messageId === messageId);
        return found ? [...(found.flags ?? [])] : null;
      } finally {
        lock.release();
      }
    },
    hold: (text) => new Promise<void>((arrived) => holds.push({ text, deliver: false, arrived })),
    holdAnswer: (text) => new Promise<void>((arrived) => holds.push({ text, deliver: true, arrived })),
    async cut() {
      cutOff = true;
      for (const s of live) s.destroy();
      live.clear();
    },
    restore() {
      cutOff = false;
    },
    dovecotLog,
    async stop() {
      for (const s of live) s.destroy();
      await new Promise((r) => proxy.close(r));
      await new Promise<void>((r) => smtp.close(() => r()));
      await appender.logout().catch(() => appender.close());
      await stopDovecot();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
