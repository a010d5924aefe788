// `hearth setup --non-interactive --email` against a real Dovecot and the smtp-server package
// playing the receiving server (test/support/mail-servers.ts): both logins checked, the owner and
// their server learned from the mail carrying the one-time code, the section and the password
// written where they belong, and the daemon then answers the owner. A refused password, or a code
// mail nobody vouches for, is one sentence and nothing written.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { mailServersMissing, startMailServers, type MailServers } from "../support/mail-servers.ts";
import { EMAIL_OWNER, mailFrom } from "../channels/conformance/email.ts";

const missing = mailServersMissing();
const CODE_PROMPT = /Send a mail with the code ([A-Z2-9]{8}) in the subject to hearth@mail\.test/;
const codeRequest = (code: string) =>
  `… Send a mail with the code ${code} in the subject to hearth@mail.test from your own address now; only a mail with this code names the owner (waiting up to 5m).\n`;

describe.skipIf(missing !== undefined)(`hearth setup --non-interactive --email${missing ? ` — skipped: ${missing}` : ""}`, () => {
  let servers: MailServers;
  let model: FakeModel;
  const homes: string[] = [];

  beforeAll(async () => {
    [servers, model] = await Promise.all([startMailServers(), startFakeModel()]);
  }, 60_000);
  afterAll(async () => {
    for (const h of homes) rmSync(h, { recursive: true, force: true });
    await servers?.stop();
    await model?.close();
  });

  const newHome = () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-setup-email-"));
    homes.push(dir);
    return join(dir, "home");
  };
  const env = (home: string, password: string) => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", EMAIL_PASSWORD: password });
  const flags = () => ["setup", "--non-interactive", "--base-url", model.url, "--email", "--email-address", "Hearth@mail.test", "--email-imap", `127.0.0.1:${servers.imapPort}`, "--email-smtp", `127.0.0.1:${servers.smtpPort}`];
  const modelLine = () => `✓ model: ${new URL(model.url).host} accepted the key; model claude-sonnet-5-5 is there\n`;
  const accountsLine = `✓ email: IMAP 127.0.0.1 (INBOX, IDLE) and SMTP 127.0.0.1 accept hearth@mail.test\n`;
  /** Runs setup; `onPrompt` gets the code once setup waits for the mail. */
  const run = (home: string, password: string, onPrompt?: (code: string) => Promise<void>) => {
    let stdout = "";
    let prompted = false;
    return runHearth(flags(), env(home, password), {
      onSpawn: (child) =>
        child.stdout!.on("data", (d: Buffer) => {
          stdout += d.toString();
          const m = CODE_PROMPT.exec(stdout);
          if (m && !prompted && onPrompt) {
            prompted = true;
            void onPrompt(m[1]!);
          }
        }),
    });
  };

  it("checks both logins, names the owner and their server by the code mail (passing over one without it), writes the section and .env, and the daemon answers the owner", async () => {
    const home = newHome();
    let code = "";
    const r = await run(home, servers.bot.password, async (c) => {
      code = c;
      await mailFrom(servers, { id: "bob@friend.test", name: "Bob" }, { subject: "Hello there", text: "no code here" });
      await mailFrom(servers, EMAIL_OWNER, { subject: `Hearth code ${c}`, text: "It is me." });
    });
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        modelLine() +
        accountsLine +
        codeRequest(code) +
        `✓ email owner: ann@owner.test, vouched for by mx.test (dkim=pass for owner.test)\n` +
        `✓ wrote ${join(home, "config.json")} (model claude-sonnet-5-5); keys and tokens in ${join(home, ".env")} (mode 600)\n` +
        `Next: npm start   (or as a service: npx hearth setup --non-interactive … --pm2, or npx pm2 start ecosystem.config.cjs)\n`,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('"event":"setup.owner_code_missing"');
    expect(r.stderr).toContain('"user":"bob@friend.test"');

    const written = readFileSync(join(home, "config.json"), "utf8");
    expect((parseJsonc(written) as any).channels.email).toEqual({
      provider: null,
      imap: { host: "127.0.0.1", port: servers.imapPort, secure: false, folder: "INBOX" },
      smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false },
      address: "hearth@mail.test",
      authservId: "mx.test",
      ownerAddresses: ["ann@owner.test"],
    });
    expect(written).not.toContain(servers.bot.password);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nEMAIL_PASSWORD=${servers.bot.password}\n`);

    // The daemon reads the password from .env, watches from now on (the code mail is not answered), and answers the owner.
    const before = servers.received.length;
    const requests = model.requests.length;
    model.enqueue(text("Hello Ann, I read your mail."));
    const daemon: Daemon = await startDaemon(home, {});
    try {
      await waitFor("the folder watched", () => daemon.log().includes('"email.watching"'));
      const sent = await mailFrom(servers, EMAIL_OWNER, { subject: "Are you there?", text: "Are you there?" });
      await waitFor("the answer", () => servers.received.length > before);
      expect(servers.received.slice(before).map((m) => [m.to, m.subject, m.inReplyTo, m.text])).toEqual([["ann@owner.test", "Re: Are you there?", sent, "Hello Ann, I read your mail."]]);
      expect(model.requests).toHaveLength(requests + 1);
      expect(daemon.log()).not.toContain(servers.bot.password);
    } finally {
      await cleanupDaemon(daemon);
    }
  }, 120_000);

  it("a refused password is one sentence without the password, and nothing is written", async () => {
    const home = newHome();
    const r = await run(home, "wrong-password-1");
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        modelLine() +
        `✗ email: 127.0.0.1 refused the login of hearth@mail.test; check the address, the servers and the password (most providers want an app password here)\nNothing was written.\n`,
    );
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain("wrong-password-1");
    expect(existsSync(join(home, "config.json"))).toBe(false);
  }, 60_000);

  it("a code mail the server does not vouch for (sent without logging in: spf=fail) is refused with why, and nothing is written", async () => {
    const home = newHome();
    let code = "";
    const r = await run(home, servers.bot.password, async (c) => {
      code = c;
      await mailFrom(servers, EMAIL_OWNER, { subject: c, text: "It is me, honestly." }, { login: false });
    });
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        modelLine() +
        accountsLine +
        codeRequest(code) +
        `✗ email owner: the mail with the code from ann@owner.test is not vouched for (mx.test did not see DKIM or SPF pass for owner.test), so Hearth could not tell your mail from a forged one; send it from your own provider's server, which signs it with DKIM or passes SPF for your domain (docs/channels/email.md)\nNothing was written.\n`,
    );
    expect(r.code).toBe(1);
    expect(existsSync(join(home, "config.json"))).toBe(false);
    expect(existsSync(join(home, ".env"))).toBe(false);
  }, 60_000);

  it("an unknown provider, or no servers, is a usage error, and nothing is written", async () => {
    const home = newHome();
    const r = await runHearth(["setup", "--non-interactive", "--base-url", model.url, "--email", "--email-address", "hearth@mail.test", "--email-provider", "yahoo"], env(home, "pw"));
    expect(r.stderr).toContain(`--email-provider is one of gmail, fastmail, outlook, icloud, proton, not "yahoo"`);
    expect(r.code).toBe(2);
    const r2 = await runHearth(["setup", "--non-interactive", "--base-url", model.url, "--email", "--email-address", "hearth@mail.test"], env(home, "pw"));
    expect(r2.stderr).toContain("--email needs --email-provider NAME, or --email-imap HOST:PORT and --email-smtp HOST:PORT");
    expect(existsSync(join(home, "config.json"))).toBe(false);
  }, 60_000);
});
