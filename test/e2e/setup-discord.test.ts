// `hearth setup` with a Discord bot, against the fake Discord (REST + gateway) and the fake model:
// the token is checked with users/@me, then the owner is found by a handshake over the gateway
// (the first direct message to the bot names them, they are greeted there), the wizard
// disconnects, and the config it writes starts a daemon that answers the owner in that DM. A
// gateway that refuses the bot, or no DM in time, is one sentence and nothing written.
import { CONFIGURABLE } from "../../src/channels/registry.ts";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OWNER_GREETING } from "../../src/cli/setup.ts";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { Intent, startFakeDiscord, type FakeDiscord } from "../support/fake-discord.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let model: FakeModel;
let discord: FakeDiscord;
const homes: string[] = [];

beforeAll(async () => {
  [model, discord] = await Promise.all([startFakeModel(), startFakeDiscord()]);
});
afterAll(async () => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
  await discord.close();
  await model.close();
});

function newHome(): string {
  const home = join(mkdtempSync(join(tmpdir(), "hearth-setup-discord-")), "home");
  homes.push(join(home, ".."));
  return home;
}

const env = (home: string, token = discord.token) => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", DISCORD_BOT_TOKEN: token });
const setup = (...flags: string[]) => ["setup", "--non-interactive", "--base-url", model.url, "--discord", ...flags];
const modelLine = () => `✓ model: ${new URL(model.url).host} accepted the key; model claude-sonnet-5-5 is there\n`;
/** The handshake's line, which carries the one-time code. */
const CODE_PROMPT = /Send a direct message saying ([A-Z2-9]{8}) to Hearth/;
const codeRequest = (code: string) => `Send a direct message saying ${code} to Hearth in Discord now (its profile in a server you share → Message); only a message with this code names the owner`;

describe("hearth setup --non-interactive with Discord", () => {
  it("finds the owner by a direct message over the gateway, greets them, disconnects, and writes a config that starts and answers them there", async () => {
    const home = newHome();
    const dana = discord.addUser("dana");
    const dm = discord.dmChannel(dana);
    const identifiesBefore = discord.gateway.identifies.length;
    let stdout = "";
    const running = runHearth(setup("--discord-api-base", discord.apiBase), env(home), {
      onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())),
    });
    await waitFor("the handshake prompt", () => CODE_PROMPT.test(stdout));
    const code = CODE_PROMPT.exec(stdout)![1]!;
    discord.sendMessage({ channelId: dm, author: dana, content: code });
    const r = await running;
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        modelLine() +
        `✓ discord: the bot is Hearth\n` +
        `… ${codeRequest(code)} (waiting up to 5m).\n` +
        `✓ discord owner: dana (@dana, id ${dana.id})\n` +
        `✓ wrote ${join(home, "config.json")} (model claude-sonnet-5-5); keys and tokens in ${join(home, ".env")} (mode 600)\n` +
        `Next: npm start   (or as a service: npx hearth setup --non-interactive … --pm2, or npx pm2 start ecosystem.config.cjs)\n`,
    );
    expect(r.code).toBe(0);
    // Connected with the daemon's DM intents, greeted the owner in the DM, then closed cleanly.
    expect(discord.gateway.identifies.slice(identifiesBefore).map((i) => i.intents)).toEqual([Intent.directMessages | Intent.messageContent]);
    expect(discord.botMessages(dm).map((m) => m.content)).toEqual([OWNER_GREETING]);
    expect(discord.gateway.clientCloses).toEqual([1000]);

    const written = readFileSync(join(home, "config.json"), "utf8");
    expect((parseJsonc(written) as any).channels.discord).toEqual({ ownerIds: [dana.id], apiBase: discord.apiBase });
    expect(written).not.toContain(discord.token);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nDISCORD_BOT_TOKEN=${discord.token}\n`);

    // The daemon gets the token from the home's .env, and answers the owner in the same DM.
    model.enqueue(text("Hello Dana, I am running."));
    const daemon: Daemon = await startDaemon(home, {});
    try {
      await discord.waitFor("the daemon's gateway connection", () => discord.connected());
      discord.sendMessage({ channelId: dm, author: dana, content: "are you there?" });
      await discord.waitFor("the answer", () => discord.botMessages(dm).some((m) => m.content === "Hello Dana, I am running."));
      expect(discord.botMessages(dm).map((m) => m.content)).toEqual([OWNER_GREETING, "Hello Dana, I am running."]);
      expect(daemon.log()).not.toContain(discord.token);
    } finally {
      await cleanupDaemon(daemon);
    }
  });

  it("a stranger spamming direct messages without the code (and with a wrong one) does not become the owner; the owner's message with the code does", async () => {
    const home = newHome();
    const stranger = discord.addUser("m\x1b[8mallory");
    const owner = discord.addUser("fran");
    let stdout = "";
    let stderr = "";
    const running = runHearth(setup("--discord-api-base", discord.apiBase), env(home), {
      onSpawn: (child) => {
        child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      },
    });
    await waitFor("the handshake prompt", () => CODE_PROMPT.test(stdout));
    const code = CODE_PROMPT.exec(stdout)![1]!;
    let spamming = true;
    const spam = (async () => {
      for (let i = 0; spamming; i++) {
        discord.sendMessage({ channelId: discord.dmChannel(stranger), author: stranger, content: i % 2 ? "/start" : "/start WRONGC0D" });
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    })();
    const ignoredLines = () => stderr.split("\n").filter((l) => l.includes('"event":"setup.owner_code_missing"'));
    try {
      await waitFor("four of the stranger's messages ignored", () => ignoredLines().length >= 4);
      discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: `/start ${code}` });
      const r = await running;
      expect(r.code).toBe(0);
      expect(r.stdout.split("\n")[4]).toBe(`✓ discord owner: fran (@fran, id ${owner.id})`);
    } finally {
      spamming = false;
      await spam;
    }
    expect((parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any).channels.discord.ownerIds).toEqual([owner.id]);
    expect(discord.botMessages(discord.dmChannel(stranger))).toEqual([]);
    expect(discord.botMessages(discord.dmChannel(owner)).map((m) => m.content)).toEqual([OWNER_GREETING]);
    for (const line of ignoredLines()) expect(line.endsWith(`"event":"setup.owner_code_missing","channel":"discord","user":"${stranger.id}","name":"m\ufffd[8mallory"}`)).toBe(true);
  });

  it("--discord-owner ID skips the handshake: no gateway connection", async () => {
    const home = newHome();
    const connections = discord.gateway.connections;
    const r = await runHearth(setup("--discord-api-base", discord.apiBase, "--discord-owner", "123456789012345678"), env(home));
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        modelLine() +
        `✓ discord: the bot is Hearth\n` +
        `✓ wrote ${join(home, "config.json")} (model claude-sonnet-5-5); keys and tokens in ${join(home, ".env")} (mode 600)\n` +
        `Next: npm start   (or as a service: npx hearth setup --non-interactive … --pm2, or npx pm2 start ecosystem.config.cjs)\n`,
    );
    expect(r.code).toBe(0);
    expect(discord.gateway.connections).toBe(connections);
    expect((parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any).channels.discord.ownerIds).toEqual(["123456789012345678"]);
  });

  it("no direct message within --handshake-timeout: one sentence, the gateway left, nothing written", async () => {
    const home = newHome();
    const r = await runHearth(setup("--discord-api-base", discord.apiBase, "--handshake-timeout", "1s"), env(home));
    const code = CODE_PROMPT.exec(r.stdout)?.[1] ?? "(no code shown)";
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        modelLine() +
        `✓ discord: the bot is Hearth\n` +
        `… ${codeRequest(code)} (waiting up to 1s).\n` +
        `✗ discord owner: no direct message with the code reached Hearth in time; run setup again, or pass --discord-owner ID\n` +
        `Nothing was written.\n`,
    );
    expect(r.code).toBe(1);
    expect(existsSync(home)).toBe(false);
    await discord.waitFor("the wizard's gateway socket to close", () => discord.openGatewaySockets() === 0);
  });

  it("a token the gateway refuses (close 4004) after users/@me accepted it: one sentence, nothing written", async () => {
    const strict = await startFakeDiscord({ rejectTokensAt: "gateway" });
    try {
      const home = newHome();
      const r = await runHearth(setup("--discord-api-base", strict.apiBase), env(home, "MTAxNTc0ODg3NjU0MzIxMDk4.Revoke.revoked-discord-bot-token-01234"));
      expect(r.stdout).toBe(
        `Hearth setup: home ${home}\n` +
          modelLine() +
          `✓ discord: the bot is Hearth\n` +
          `✗ discord owner: Discord's gateway refused the token (4004 Authentication failed); reset it in the Developer Portal (Bot → Reset Token)\n` +
          `Nothing was written.\n`,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toBe("");
      expect(existsSync(home)).toBe(false);
      expect(strict.gateway.identifies).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });
});

describe("hearth setup in a terminal, with Discord", () => {
  const python = spawnSync("python3", ["--version"]).status === 0;
  it.skipIf(!python)("shows each direct message's author for the owner to confirm: a declined one is passed over, the confirmed one is the owner", async () => {
    const home = newHome();
    const mallory = discord.addUser("mallory");
    const erin = discord.addUser("erin");
    const child = spawn("python3", [join(import.meta.dirname, "..", "support", "pty-run.py"), process.execPath, hearthBin, "setup", "--base-url", model.url, "--discord-api-base", discord.apiBase], {
      cwd: repoRoot,
      env: isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", TERM: "xterm", COLUMNS: "200", LINES: "50" }),
      stdio: ["pipe", "pipe", "inherit"],
    });
    let screen = "";
    child.stdout!.on("data", (d: Buffer) => (screen += d.toString().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      // Each answer is typed only once its question is on the screen after `after` (prompts redraw).
      const answer = async (question: string, keys: string, after = "") => {
        await waitFor(`"${question}"`, () => screen.includes(after) && screen.indexOf(question, screen.indexOf(after)) >= 0);
        child.stdin!.write(keys);
      };
      await answer("Which model provider?", "\r");
      await answer("Model", "\r");
      await answer("Connect a Telegram bot?", "n");
      await answer("Connect a Discord bot?", "y");
      await answer("Discord bot token", `${discord.token}\r`);
      await waitFor("the handshake prompt with its code", () => CODE_PROMPT.test(screen));
      const code = CODE_PROMPT.exec(screen)![1]!;
      expect(screen).toContain(codeRequest(code));
      // A DM without the code is passed over without a question; one with it is asked about.
      discord.sendMessage({ channelId: discord.dmChannel(mallory), author: mallory, content: "me! me!" });
      await waitFor("mallory ignored", () => screen.includes(`Ignored a direct message without the code from mallory (@mallory, id ${mallory.id})`));
      discord.sendMessage({ channelId: discord.dmChannel(mallory), author: mallory, content: code });
      await answer("Is this you (the owner)?", "n", `A direct message with the code from mallory (@mallory, id ${mallory.id})`);
      await waitFor("the wait again", () => screen.includes(`Waiting for the owner's direct message with the code ${code}`));
      discord.sendMessage({ channelId: discord.dmChannel(erin), author: erin, content: code });
      await answer("Is this you (the owner)?", "y", `A direct message with the code from erin (@erin, id ${erin.id})`);
      // Every later platform setup offers is declined (each defaults to no).
      for (const c of CONFIGURABLE.filter((c) => !["telegram", "discord"].includes(c.id))) {
        const offer = c.setup?.offer ?? c.linkSetup?.offer;
        if (offer) await answer(offer, "\r");
      }
      await answer("Turn on the web dashboard", "\r");
      await answer("Run Hearth as a service with pm2 now", "\r");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(screen).toContain("The bot is Hearth");
    expect(screen).toContain("Start it with: npm start");
    expect((parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any).channels.discord).toEqual({ ownerIds: [erin.id], apiBase: discord.apiBase });
    expect(discord.botMessages(discord.dmChannel(erin)).map((m) => m.content)).toEqual([OWNER_GREETING]);
    expect(discord.botMessages(discord.dmChannel(mallory))).toEqual([]);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nDISCORD_BOT_TOKEN=${discord.token}\n`);
  });
});
