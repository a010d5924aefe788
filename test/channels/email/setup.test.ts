// `hearth setup` for email: how the code mail is judged (its subject, its topmost
// Authentication-Results header), and the interactive wizard's part run with a scripted terminal
// against a real Dovecot and smtp-server: a refused password asked again, a code mail from
// someone else declined, the owner's accepted, and what setup writes from the answers.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LinkUi } from "../../../src/channels/descriptor.ts";
import { authResultsOf, judgeCodeMail, subjectCarriesCode } from "../../../src/channels/email/handshake.ts";
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { writeSetup } from "../../../src/config/setup-config.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";
import { mailServersMissing, startMailServers, type MailServers } from "../../support/mail-servers.ts";
import { EMAIL_OWNER, mailFrom } from "../conformance/email.ts";

describe("the code mail", () => {
  it("carries the code as a word of its subject, case forgiven", () => {
    expect(subjectCarriesCode("ABCD2345", "ABCD2345")).toBe(true);
    expect(subjectCarriesCode("Re: hearth abcd2345!", "ABCD2345")).toBe(true);
    expect(subjectCarriesCode("ABCD23456", "ABCD2345")).toBe(false);
    expect(subjectCarriesCode("", "ABCD2345")).toBe(false);
  });

  it("reads the Authentication-Results fields of a header block, top first, unfolded", () => {
    const block = "Authentication-Results: mx.example.org;\r\n\tdkim=pass header.d=a.test\r\nFrom: x@a.test\r\nauthentication-results: other.test; spf=pass smtp.mailfrom=x@a.test\r\n\r\n";
    expect(authResultsOf(block)).toEqual(["mx.example.org; dkim=pass header.d=a.test", "other.test; spf=pass smtp.mailfrom=x@a.test"]);
  });

  it("names the owner and the topmost header's server only when that header says DKIM or SPF passed for the From: domain", () => {
    const ann = { address: "Ann@Owner.test", name: "Ann" };
    expect(judgeCodeMail(ann, ["mx.example.org; dkim=pass header.d=owner.test", "mx.evil.test; spf=pass smtp.mailfrom=x@evil.test"])).toEqual({
      ok: true,
      owner: { address: "ann@owner.test", name: "Ann", authservId: "mx.example.org", by: "dkim=pass for owner.test" },
    });
    // A passing header below the top one (anyone can write one into the mail they send) does not count.
    expect(judgeCodeMail(ann, ["mx.example.org; spf=fail smtp.mailfrom=ann@owner.test", "mx.example.org; dkim=pass header.d=owner.test"])).toEqual({
      ok: false,
      problem: `the mail with the code from ann@owner.test is not vouched for (mx.example.org did not see DKIM or SPF pass for owner.test), so Hearth could not tell your mail from a forged one; send it from your own provider's server, which signs it with DKIM or passes SPF for your domain (docs/channels/email.md)`,
    });
    expect(judgeCodeMail(ann, ["mx.example.org; dkim=pass header.d=other.test"]).ok).toBe(false);
    const none = `the mail with the code from ann@owner.test carries no Authentication-Results header that reads, so Hearth could not tell your mail from a forged one; Hearth's mailbox must be at a provider that checks DKIM and SPF (docs/channels/email.md)`;
    expect(judgeCodeMail(ann, [])).toEqual({ ok: false, problem: none });
    expect(judgeCodeMail(ann, ["mx.example.org; dkim=pass (unclosed"])).toEqual({ ok: false, problem: none });
  });
});

/** A terminal that answers from a script: `asks` in order ("" takes the offered value), `choices` in order; everything shown is kept. */
function scripted(asks: string[], choices: string[]): LinkUi & { said: string[]; asked: string[]; secret: string[] } {
  const said: string[] = [];
  const asked: string[] = [];
  const secret: string[] = [];
  return {
    said,
    asked,
    secret,
    async ask(message, opts) {
      asked.push(message);
      if (opts?.secret) secret.push(message);
      const a = asks.shift();
      return a === "" ? (opts?.initialValue ?? "") : (a ?? "");
    },
    async choose(message, options) {
      asked.push(message);
      const c = choices.shift()!;
      if (!options.some((o) => o.value === c)) throw new Error(`"${c}" is not among ${JSON.stringify(options)}`);
      return c as never;
    },
    say: (text) => void said.push(text),
  };
}

const missing = mailServersMissing();

describe.skipIf(missing !== undefined)(`email's interactive setup${missing ? ` — skipped: ${missing}` : ""}`, () => {
  let servers: MailServers;
  let home: string;
  beforeAll(async () => {
    servers = await startMailServers();
    home = mkdtempSync(join(tmpdir(), "hearth-email-setup-"));
  }, 60_000);
  afterAll(async () => {
    await servers?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("asks again after a refused password, passes over someone else's code mail the owner declines, and returns the owner's section and the password apart", async () => {
    const imap = `127.0.0.1:${servers.imapPort}`;
    const smtp = `127.0.0.1:${servers.smtpPort}`;
    const ui = scripted([imap, smtp, "hearth@mail.test", "wrong-password-1", "", "", "", servers.bot.password], ["other", "other", "no", "yes"]);
    const running = channelDescriptor("email")!.linkSetup!.run(ui, home, 600_000);
    const codeLine = () => ui.said.find((l) => l.startsWith("Send a mail with the code"));
    await waitFor("the code request", () => codeLine() !== undefined);
    const code = /the code ([A-Z2-9]{8}) /.exec(codeLine()!)![1]!;
    await mailFrom(servers, { id: "bob@friend.test", name: "Bob" }, { subject: code, text: "Me!" });
    await waitFor("Bob's mail shown for the owner to decline", () => ui.asked.some((q) => q.includes("bob@friend.test")));
    await mailFrom(servers, EMAIL_OWNER, { subject: `Re: ${code}`, text: "It is me." });
    const r = await running;

    expect(ui.said).toEqual([
      "✗ 127.0.0.1 refused the login of hearth@mail.test; check the address, the servers and the password (most providers want an app password here).",
      "✓ IMAP 127.0.0.1 (INBOX, IDLE) and SMTP 127.0.0.1 accept hearth@mail.test",
      `Send a mail with the code ${code} in the subject to hearth@mail.test from your own address now; only a mail with this code names the owner (waiting up to 10 minutes).`,
    ]);
    expect(ui.asked.filter((q) => q.startsWith("A mail with the code"))).toEqual([
      "A mail with the code from Bob <bob@friend.test>, vouched for by mx.test (dkim=pass for friend.test). Is this you, and is mx.test your mail server?",
      "A mail with the code from Ann <ann@owner.test>, vouched for by mx.test (dkim=pass for owner.test). Is this you, and is mx.test your mail server?",
    ]);
    expect(ui.secret).toEqual(["The (app) password of hearth@mail.test", "The (app) password of hearth@mail.test"]);
    expect(r).toEqual({
      ok: true,
      section: {
        provider: null,
        imap: { host: "127.0.0.1", port: servers.imapPort, secure: false, folder: "INBOX" },
        smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false },
        address: "hearth@mail.test",
        authservId: "mx.test",
        ownerAddresses: ["ann@owner.test"],
      },
      secrets: { EMAIL_PASSWORD: servers.bot.password },
      linked: "Email: Hearth reads hearth@mail.test; the owner is ann@owner.test, vouched for by mx.test",
    });

    // What setup writes from it: the section in config.json, the password only in .env; the config loads with it.
    if (!r.ok) return;
    writeSetup(home, { model: { kind: "anthropic", model: "claude-sonnet-5-5" }, channels: {}, linked: { email: r.section }, secrets: r.secrets! }, silentLogger);
    expect(readFileSync(join(home, "config.json"), "utf8")).not.toContain(servers.bot.password);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`EMAIL_PASSWORD=${servers.bot.password}\n`);
    const c = loadConfig({ home, env: {} }).channels.email!;
    expect([c.address, c.authservId, c.ownerAddresses, c.password]).toEqual(["hearth@mail.test", "mx.test", ["ann@owner.test"], servers.bot.password]);
  }, 60_000);
});
