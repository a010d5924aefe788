// doctor's checks of the email section: offline (what is missing) and online against real servers.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doctor } from "../../../src/cli/doctor.ts";
import { checkMailAccounts } from "../../../src/channels/email/check.ts";
import { email, type EmailConfig } from "../../../src/channels/email/descriptor.ts";
import { parseConfig } from "../../../src/config/config.ts";
import { mailServersMissing, startMailServers, type MailServers } from "../../support/mail-servers.ts";

const section = (raw: Record<string, unknown>): EmailConfig => (parseConfig({ channels: { email: raw } }, { home: "/nonexistent", env: {} }).channels as { email: EmailConfig }).email;

describe("doctor's offline checks of channels.email", () => {
  it("says what is missing, and fills the hosts from a provider", () => {
    expect(email.check!(section({}))).toEqual([{ ok: false, detail: "no address (the mailbox Hearth watches)", fix: 'set it in channels.email (docs/channels/email.md)' }]);
    expect(email.check!(section({ address: "h@x.test" }))[0]!.detail).toBe("no imap.host and no provider (gmail, fastmail, outlook, icloud, proton)");
    expect(email.check!(section({ address: "h@gmail.com", provider: "gmail", authservId: "mx.google.com", ownerAddresses: ["Ann@Example.org"] }))).toEqual([
      { ok: true, detail: "reads h@gmail.com at imap.gmail.com:993 (INBOX), sends through smtp.gmail.com:465" },
    ]);
    expect(email.check!(section({ address: "h@gmail.com", provider: "gmail" })).map((c) => c.detail)).toEqual([
      "reads h@gmail.com at imap.gmail.com:993 (INBOX), sends through smtp.gmail.com:465",
      "no authservId: no mail counts as the owner's",
    ]);
  });

  it("reads addresses in lower case and refuses what is not one", () => {
    expect(section({ ownerAddresses: ["Ann@Example.org"] }).ownerAddresses).toEqual(["ann@example.org"]);
    expect(() => section({ ownerAddresses: ["ann"] })).toThrow(/expected an email address/);
    expect(section({}).dmPolicy).toBe("disabled");
  });
});

describe("hearth doctor with channels.email", () => {
  let home: string;
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  it("names the owner key email uses, then lists its own checks", async () => {
    home = mkdtempSync(join(tmpdir(), "hearth-doctor-email-"));
    writeFileSync(join(home, ".env"), "ANTHROPIC_API_KEY=sk-ant-x\nEMAIL_PASSWORD=app-password-1\n", { mode: 0o600 });
    const write = (email: Record<string, unknown>) => writeFileSync(join(home, "config.json"), JSON.stringify({ channels: { email } }), { mode: 0o600 });
    const lines = async () => (await doctor(home, {})).filter((c) => c.name === "email").map((c) => `${c.ok ? "✓" : "✗"} ${c.detail}${c.fix ? ` | fix: ${c.fix}` : ""}`);
    write({ provider: "fastmail", address: "h@fastmail.com" });
    expect(await lines()).toEqual(["✗ no ownerAddresses: nobody gets your private, full-access chat | fix: add your Email user id to channels.email.ownerAddresses (your own email address)"]);
    write({ provider: "fastmail", address: "h@fastmail.com", ownerAddresses: ["ann@example.org"] });
    expect(await lines()).toEqual([
      "✓ token set (not shown), owner ann@example.org",
      "✓ reads h@fastmail.com at imap.fastmail.com:993 (INBOX), sends through smtp.fastmail.com:465",
      '✗ no authservId: no mail counts as the owner\'s | fix: set channels.email.authservId (docs/channels/email.md)',
    ]);
  });
});

describe.skipIf(mailServersMissing() !== undefined)("doctor --online against real servers", () => {
  let servers: MailServers;
  beforeAll(async () => {
    servers = await startMailServers();
  });
  afterAll(() => servers?.stop());
  const config = (password: string) =>
    section({ address: servers.bot.address, password, imap: { host: "127.0.0.1", port: servers.imapPort, secure: false }, smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false } });

  it("logs in to both and finds IDLE", async () => {
    expect(await checkMailAccounts(config(servers.bot.password))).toEqual({ ok: true, detail: `IMAP 127.0.0.1 (INBOX, IDLE) and SMTP 127.0.0.1 accept ${servers.bot.address}` });
  });

  it("says which server refused the login, without the password", async () => {
    const r = await checkMailAccounts(config("wrong-password"));
    expect(r).toEqual({ ok: false, detail: `127.0.0.1 refused the login of ${servers.bot.address}`, fix: "check channels.email.imap and EMAIL_PASSWORD (an app password)" });
    expect(JSON.stringify(r)).not.toContain("wrong-password");
  });
});
