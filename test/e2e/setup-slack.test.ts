// `hearth setup` with a Slack app, against the fake Slack and the fake model: both tokens are
// checked (auth.test, apps.connections.open), the owner is found by a direct message carrying the
// one-time code over Socket Mode (a DM without it is ignored), greeted there, and the config and
// .env it writes start a daemon that answers the owner in that DM. A refused app token is one
// sentence and nothing written. In a terminal, the app manifest comes first, then both prompts.
import { CONFIGURABLE } from "../../src/channels/registry.ts";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OWNER_GREETING } from "../../src/cli/setup.ts";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, startDaemon, waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { SLACK_MANIFEST } from "../../src/channels/slack/setup.ts";
import { startFakeSlack, type FakeSlack } from "../support/fake-slack.ts";

let model: FakeModel;
let slack: FakeSlack;
const homes: string[] = [];

beforeAll(async () => {
  [model, slack] = await Promise.all([startFakeModel(), startFakeSlack()]);
});
afterAll(async () => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
  await slack.close();
  await model.close();
});

function newHome(): string {
  const home = join(mkdtempSync(join(tmpdir(), "hearth-setup-slack-")), "home");
  homes.push(join(home, ".."));
  return home;
}

const env = (home: string, appToken = slack.appToken) => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: appToken });
const setup = (...flags: string[]) => ["setup", "--non-interactive", "--base-url", model.url, "--slack", "--slack-api-url", slack.apiUrl, ...flags];
const CODE_PROMPT = /Send a direct message saying ([A-Z2-9]{8}) to @hearth/;

describe("hearth setup --non-interactive with Slack", () => {
  it("checks both tokens, finds the owner by a DM with the code (not by one without), greets them, and writes a config that starts and answers them there", async () => {
    const home = newHome();
    const stranger = slack.addUser("mallory");
    const gus = slack.addUser("gus");
    const dm = slack.dmChannel(gus);
    let stdout = "";
    const running = runHearth(setup(), env(home), { onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())) });
    await waitFor("the handshake prompt", () => CODE_PROMPT.test(stdout));
    const code = CODE_PROMPT.exec(stdout)![1]!;
    const ignored = slack.postMessage({ channel: slack.dmChannel(stranger), user: stranger, text: "hello?" });
    await slack.waitFor("the stranger's DM handled", () => slack.acks.includes(ignored.envelopeId));
    slack.postMessage({ channel: dm, user: gus, text: code });
    const r = await running;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.split("\n").slice(2, 5)).toEqual([
      "✓ slack: the bot is @hearth",
      `… Send a direct message saying ${code} to @hearth in Slack now (Apps → hearth → Messages, or search for it); only a message with this code names the owner (waiting up to 5m).`,
      `✓ slack owner: gus (@gus, id ${gus.id})`,
    ]);
    expect(slack.calls.filter((c) => c.method === "auth.test").length).toBeGreaterThanOrEqual(1);
    expect(slack.botMessages(dm).map((m) => m.text)).toEqual([OWNER_GREETING]);
    expect(slack.botMessages(slack.dmChannel(stranger))).toEqual([]);

    const written = readFileSync(join(home, "config.json"), "utf8");
    expect((parseJsonc(written) as any).channels.slack).toEqual({ ownerIds: [gus.id], apiUrl: slack.apiUrl });
    expect(written).not.toContain(slack.botToken);
    const dotenv = readFileSync(join(home, ".env"), "utf8");
    expect(dotenv).toContain(`\nSLACK_BOT_TOKEN=${slack.botToken}\n`);
    expect(dotenv).toContain(`\nSLACK_APP_TOKEN=${slack.appToken}\n`);

    model.enqueue(text("Hello Gus, I am running."));
    const connections = slack.connections;
    const daemon = await startDaemon(home, {});
    try {
      await slack.waitFor("the daemon's connection", () => slack.connections > connections && slack.connected());
      slack.postMessage({ channel: dm, user: gus, text: "are you there?" });
      await slack.waitFor("the answer", () => slack.botMessages(dm).some((m) => m.text === "Hello Gus, I am running."));
      expect(slack.botMessages(dm).map((m) => m.text)).toEqual([OWNER_GREETING, "Hello Gus, I am running."]);
      expect(daemon.log()).not.toContain(slack.appToken);
    } finally {
      await cleanupDaemon(daemon);
    }
  });

  it("a refused app token is one sentence, and nothing is written", async () => {
    const home = newHome();
    const r = await runHearth(setup(), env(home, "xapp-1-revoked-token-0000"));
    expect(r.stdout.split("\n").at(-3)).toBe("✗ slack: Slack refused apps.connections.open (invalid_auth); check that Socket Mode is on and the token has connections:write");
    expect(r.code).toBe(1);
    expect(existsSync(join(home, "config.json"))).toBe(false);
    expect(r.stdout).not.toContain("xapp-1-revoked-token-0000");
  });
});

describe("hearth setup in a terminal, with Slack", () => {
  const python = spawnSync("python3", ["--version"]).status === 0;
  it.skipIf(!python)("shows the app manifest first, asks for both tokens in turn, and finds the owner by a DM with the code", async () => {
    const home = newHome();
    const ivy = slack.addUser("ivy");
    const child = spawn("python3", [join(import.meta.dirname, "..", "support", "pty-run.py"), process.execPath, hearthBin, "setup", "--base-url", model.url, "--slack-api-url", slack.apiUrl], {
      cwd: repoRoot,
      env: isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", TERM: "xterm", COLUMNS: "240", LINES: "80" }),
      stdio: ["pipe", "pipe", "inherit"],
    });
    let screen = "";
    child.stdout!.on("data", (d: Buffer) => (screen += d.toString().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      const answer = async (question: string, keys: string, after = "") => {
        await waitFor(`"${question}"`, () => screen.includes(after) && screen.indexOf(question, screen.indexOf(after)) >= 0);
        child.stdin!.write(keys);
      };
      await answer("Which model provider?", "\r");
      await answer("Model", "\r");
      await answer("Connect a Telegram bot?", "n");
      await answer("Connect a Discord bot?", "n");
      await answer("Connect a Slack app?", "y");
      await answer("Slack bot token", `${slack.botToken}\r`);
      await answer("Slack SLACK_APP_TOKEN", `${slack.appToken}\r`);
      await waitFor("the handshake prompt with its code", () => CODE_PROMPT.test(screen));
      slack.postMessage({ channel: slack.dmChannel(ivy), user: ivy, text: CODE_PROMPT.exec(screen)![1]! });
      await answer("Is this you (the owner)?", "y", `A direct message with the code from ivy (@ivy, id ${ivy.id})`);
      // Every later platform setup offers is declined (each defaults to no).
      for (const c of CONFIGURABLE.slice(CONFIGURABLE.findIndex((c) => c.id === "slack") + 1)) {
        const offer = c.setup?.offer ?? c.linkSetup?.offer;
        if (offer) await answer(offer, "\r", "Is this you (the owner)?");
      }
      await answer("Turn on the web dashboard", "\r");
      await answer("Run Hearth as a service with pm2 now", "\r");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    // The manifest, line by line, before the first token prompt.
    const before = screen.slice(0, screen.indexOf("Slack bot token"));
    for (const line of SLACK_MANIFEST.split("\n")) expect(before).toContain(line.trim());
    expect(screen).toContain("The bot is @hearth");
    expect((parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any).channels.slack).toEqual({ ownerIds: [ivy.id], apiUrl: slack.apiUrl });
    const dotenv = readFileSync(join(home, ".env"), "utf8");
    expect(dotenv).toContain(`\nSLACK_BOT_TOKEN=${slack.botToken}\n`);
    expect(dotenv).toContain(`\nSLACK_APP_TOKEN=${slack.appToken}\n`);
  });
});
