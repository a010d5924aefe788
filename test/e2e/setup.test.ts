// `hearth setup` against the fake model and the Telegram emulator, in a pseudo-terminal
// (test/support/pty-run.py; each answer typed once its question is on the screen) and with
// `--non-interactive`: the key and
// the token are checked before anything is written, the owner is found by the /start handshake,
// the config it writes starts a daemon that answers the owner (keys only in the 0600 .env), a
// second run keeps the first one's comments and the owner's own settings; an upgrade migrates an
// old config.json, and one from a newer Hearth stops `start` with exit 2.
import { CONFIGURABLE } from "../../src/channels/registry.ts";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { main } from "../../src/cli.ts";
import { OWNER_GREETING } from "../../src/cli/setup.ts";
import { CONFIG_VERSION } from "../../src/config/migrations.ts";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 4242;
const SECOND_OWNER = 4343;
const STRANGER = 6666;
/** A name chosen to attack the owner's terminal: hide what follows (ESC[8m), set the window title (OSC … BEL), a C1 CSI. */
const HOSTILE_NAME = "Mal\x1b[8m\x1b]0;owner\x07 ory\x1b[0m\u009b2J";
/** The same name as Hearth prints it: every control character replaced by U+FFFD. */
const PRINTED_NAME = "Mal\ufffd[8m\ufffd]0;owner\ufffd ory\ufffd[0m\ufffd2J";
let fake: FakeModel;
let emu: TelegramEmulator;
let refusing: Server;
let daemon: Daemon | undefined;
const homes: string[] = [];
/** Daemons `hearth restart` started in the background: killed at the end if a test failed first. */
const background: number[] = [];

beforeAll(async () => {
  [fake, emu] = await Promise.all([startFakeModel(), startTelegramEmulator()]);
  refusing = createServer((_req, res) => res.writeHead(401, { "content-type": "application/json" }).end(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`));
  await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  for (const pid of background) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  for (const h of homes) rmSync(h, { recursive: true, force: true });
  await new Promise((resolve) => refusing.close(resolve));
  await emu.stop();
  await fake.close();
});

function newHome(): string {
  const home = join(mkdtempSync(join(tmpdir(), "hearth-setup-")), "home");
  homes.push(join(home, ".."));
  return home;
}

/** `hearth ARGS` in this process (the checks that fail before anything is written need no process of their own). */
async function inProcess(args: string[], vars: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  const saved = { ...process.env };
  let stdout = "";
  const sink = new PassThrough();
  sink.on("data", (d: Buffer) => (stdout += d.toString()));
  Object.assign(process.env, vars);
  try {
    const code = await main(args, { stdin: new PassThrough(), stdout: sink, stderr: new PassThrough() });
    return { code, stdout };
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** The handshake's line, which carries the one-time code. */
const CODE_PROMPT = /Send \/start ([A-Z2-9]{8}) to @TestNameBot/;
const codeRequest = (code: string) =>
  `Send /start ${code} to @TestNameBot in Telegram now, or open https://t.me/TestNameBot?start=${code}; only a private message with this code names the owner`;

const env = (home: string, extra: Record<string, string> = {}) => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", TELEGRAM_BOT_TOKEN: emu.token, ...extra });
const setup = (...flags: string[]) => ["setup", "--non-interactive", "--base-url", fake.url, ...flags];

describe("hearth setup --non-interactive", () => {
  it("checks the key first: a refused key stops setup with nothing written", async () => {
    const home = newHome();
    const port = (refusing.address() as AddressInfo).port;
    const r = await inProcess(["setup", "--non-interactive", "--base-url", `http://127.0.0.1:${port}`], env(home));
    expect(r.stdout).toBe(`Hearth setup: home ${home}\n✗ model: 127.0.0.1:${port} refused the key (HTTP 401); copy it again\nNothing was written.\n`);
    expect(r.code).toBe(1);
    expect(existsSync(home)).toBe(false);
  });

  it("takes the address from ANTHROPIC_BASE_URL when --base-url is not given, and names both when it cannot reach it", async () => {
    const home = newHome();
    const r = await inProcess(["setup", "--non-interactive"], env(home, { ANTHROPIC_BASE_URL: fake.url }));
    expect(r.stdout.split("\n").slice(0, 2)).toEqual([`Hearth setup: home ${home}`, `✓ model: ${new URL(fake.url).host} accepted the key; model claude-sonnet-5-5 is there`]);
    expect(r.code).toBe(0);
    expect((parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any).model.baseUrl).toBe(fake.url);

    const closed = newHome();
    // A port nothing listens on: taken, then given back.
    const probe = createServer().listen(0, "127.0.0.1");
    await once(probe, "listening");
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const down = await inProcess(["setup", "--non-interactive"], env(closed, { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` }));
    expect(down.stdout).toBe(
      `Hearth setup: home ${closed}\n✗ model: 127.0.0.1:${port} cannot be reached (ECONNREFUSED); another address (a proxy, a gateway): --base-url URL, or ANTHROPIC_BASE_URL\nNothing was written.\n`,
    );
    expect(down.code).toBe(1);
  });

  it("leaves a config.json with a mistake as it is: exit 2 naming the line", async () => {
    const home = newHome();
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "config.json"), `{ "agent": { "maxTurns": 7 }, oops }\n`);
    const r = await inProcess(setup(), env(home));
    expect(r.code).toBe(2);
    expect(readFileSync(join(home, "config.json"), "utf8")).toBe(`{ "agent": { "maxTurns": 7 }, oops }\n`);
    expect(readdirSync(home)).toEqual(["config.json"]);
  });

  it("checks the bot token: one Telegram refuses stops setup with nothing written", async () => {
    const home = newHome();
    emu.inject({ method: "getMe", reply: { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } } });
    const r = await inProcess(setup("--telegram", "--telegram-api-root", emu.apiRoot), env(home));
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n✓ model: ${new URL(fake.url).host} accepted the key; model claude-sonnet-5-5 is there\n` +
        `✗ telegram: Telegram refused the token; copy it again from @BotFather (/token)\nNothing was written.\n`,
    );
    expect(r.code).toBe(1);
    expect(existsSync(home)).toBe(false);
  });

  it("finds the owner by the /start handshake, writes a config that starts and answers the owner, and a second run keeps the first one's comments and settings", async () => {
    const home = newHome();
    // An older Hearth's config (from before versions) is already there: setup migrates it first.
    const fixtures = join(import.meta.dirname, "..", "config", "fixtures", "config-versions");
    mkdirSync(home, { recursive: true, mode: 0o700 });
    copyFileSync(join(fixtures, "v0-init-template.jsonc"), join(home, "config.json"));
    chmodSync(join(home, "config.json"), 0o600);
    const old = readFileSync(join(home, "config.json"), "utf8");

    let stdout = "";
    const running = runHearth(setup("--telegram", "--telegram-api-root", emu.apiRoot), env(home), {
      onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())),
    });
    await waitFor("the handshake prompt", () => CODE_PROMPT.test(stdout));
    const code = CODE_PROMPT.exec(stdout)![1]!;
    const owner = emu.user({ userId: OWNER, firstName: "Ann", username: "ann" });
    await owner.send(`/start ${code}`);
    const r = await running;
    expect(r.stdout).toBe(
      `Hearth setup: home ${home}\n` +
        `✓ model: ${new URL(fake.url).host} accepted the key; model claude-sonnet-5-5 is there\n` +
        `✓ telegram: the bot is @TestNameBot\n` +
        `… ${codeRequest(code)} (waiting up to 5m).\n` +
        `✓ telegram owner: Ann (@ann, id ${OWNER})\n` +
        `✓ wrote ${join(home, "config.json")} (model claude-sonnet-5-5); keys and tokens in ${join(home, ".env")} (mode 600)\n` +
        `Next: npm start   (or as a service: npx hearth setup --non-interactive … --pm2, or npx pm2 start ecosystem.config.cjs)\n`,
    );
    expect(r.code).toBe(0);
    expect((await emu.waitForBotMessages(owner.chatId, 1)).map((m) => m.text)).toEqual([OWNER_GREETING]);

    const written = readFileSync(join(home, "config.json"), "utf8");
    const raw = parseJsonc(written) as any;
    expect(raw.version).toBe(CONFIG_VERSION);
    expect(raw.channels.telegram).toEqual({ ownerIds: [String(OWNER)], apiRoot: emu.apiRoot });
    expect(raw.model.baseUrl).toBe(fake.url);
    expect(written).not.toContain(emu.token);
    expect(written).not.toContain("sk-ant-setup-test-key");
    expect(written).toContain("// Your files: SOUL.md, USER.md, MEMORY.md, memory/… A relative path is inside this folder.");
    expect(readFileSync(join(home, "config.json.v0.bak"), "utf8")).toBe(old);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nANTHROPIC_API_KEY=sk-ant-setup-test-key\nTELEGRAM_BOT_TOKEN=${emu.token}\n`);

    // The daemon gets no key from its environment: they come from the home's .env.
    fake.enqueue(text("Hello Ann, I am running."));
    daemon = await startDaemon(home, {});
    await owner.send("are you there?");
    await waitFor("the answer", () => emu.botMessages(owner.chatId).some((m) => m.text === "Hello Ann, I am running."));
    expect(emu.botMessages(owner.chatId).map((m) => m.text)).toEqual([OWNER_GREETING, "Hello Ann, I am running."]);
    expect(daemon.log()).not.toContain(emu.token);
    // `hearth stop` stops a daemon running in a terminal cleanly, and waits for it.
    const pid = daemon.proc.pid!;
    const stopped = await runHearth(["stop"], env(home));
    expect(stopped).toEqual({ code: 0, stdout: `Stopped Hearth (pid ${pid}).\n`, stderr: "" });
    expect(await daemon.exited).toBe(0);
    daemon = undefined;

    // `hearth restart` with no daemon running starts one in the background, logging to the
    // file `hearth logs` reads; `hearth stop` stops it again.
    const restarted = await runHearth(["restart"], env(home));
    expect(restarted.code).toBe(0);
    const bgPid = Number(/^Started Hearth in the background \(pid (\d+)\)/.exec(restarted.stdout)?.[1]);
    expect(restarted.stdout).toBe(`Started Hearth in the background (pid ${bgPid}); its log: \`npx hearth logs -f\`.\n`);
    background.push(bgPid);
    await waitFor("the background daemon is ready", async () => / info  gateway\.ready /.test((await runHearth(["logs", "-n", "1000"], env(home))).stdout));
    // Split as pm2 splits it: info lines in hearth.out.log, none in hearth.err.log.
    expect(readFileSync(join(home, "logs", "hearth.out.log"), "utf8")).toContain('"event":"gateway.ready"');
    expect(readFileSync(join(home, "logs", "hearth.err.log"), "utf8")).not.toContain('"level":"info"');
    expect(await runHearth(["stop"], env(home))).toEqual({ code: 0, stdout: `Stopped Hearth (pid ${bgPid}).\n`, stderr: "" });

    // The owner edits the file by hand; a second run changes the model only.
    const edited = written.replace('"maxTurns": 25,', '"maxTurns": 7, // mine: short runs');
    expect(edited).not.toBe(written);
    writeFileSync(join(home, "config.json"), edited);
    const again = await runHearth(setup("--model", "claude-haiku-5", "--telegram", "--telegram-owner", String(OWNER), "--telegram-api-root", emu.apiRoot), env(home));
    expect(again.code).toBe(0);
    const second = readFileSync(join(home, "config.json"), "utf8");
    expect(second).toBe(edited.replace('"name": "claude-sonnet-5-5"', '"name": "claude-haiku-5"'));
    expect(readdirSync(home).filter((n) => n.includes(".bak"))).toEqual(["config.json.v0.bak"]);
  });
});

describe("the owner is proven by the code, never raced", () => {
  it("a stranger spamming /start and /start with a wrong code while setup waits does not become the owner; the owner's /start CODE does", async () => {
    const home = newHome();
    let stdout = "";
    let stderr = "";
    const running = runHearth(setup("--telegram", "--telegram-api-root", emu.apiRoot), env(home), {
      onSpawn: (child) => {
        child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      },
    });
    await waitFor("the handshake prompt", () => CODE_PROMPT.test(stdout));
    const code = CODE_PROMPT.exec(stdout)![1]!;
    // The stranger writes first and keeps writing, every 300 ms, until setup ends.
    const stranger = emu.user({ userId: STRANGER, firstName: HOSTILE_NAME });
    let spamming = true;
    const spam = (async () => {
      for (let i = 0; spamming; i++) {
        await stranger.send(i % 2 ? "/start" : "/start WRONGC0D");
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    })();
    const ignoredLines = () => stderr.split("\n").filter((l) => l.includes('"event":"setup.owner_code_missing"'));
    try {
      await waitFor("four of the stranger's messages ignored", () => ignoredLines().length >= 4);
      const owner = emu.user({ userId: SECOND_OWNER, firstName: "Ann", username: "ann" });
      await owner.send(`/start ${code}`);
      const r = await running;
      expect(r.code).toBe(0);
      expect(r.stdout.split("\n").slice(2, 5)).toEqual([`✓ telegram: the bot is @TestNameBot`, `… ${codeRequest(code)} (waiting up to 5m).`, `✓ telegram owner: Ann (@ann, id ${SECOND_OWNER})`]);
    } finally {
      spamming = false;
      await spam;
    }
    const raw = parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any;
    expect(raw.channels.telegram.ownerIds).toEqual([String(SECOND_OWNER)]);
    expect(emu.botMessages(STRANGER)).toEqual([]);
    expect(emu.botMessages(SECOND_OWNER).map((m) => m.text)).toEqual([OWNER_GREETING]);
    // Each ignored message is one log line naming the sender, the escapes in the name replaced.
    for (const line of ignoredLines()) {
      expect(line).toMatch(/^\{"t":"[^"]+","level":"warn","event":"setup.owner_code_missing","channel":"telegram","user":"6666","name":"(.*)"\}$/);
      expect(line.endsWith(`"name":"${PRINTED_NAME}"}`)).toBe(true);
    }
    expect(stderr).not.toContain("\x1b");
    expect(stderr).not.toContain("\\u001b");
  });

  it("no message with the code within --handshake-timeout: one sentence, nothing written", async () => {
    const home = newHome();
    let stdout = "";
    const running = runHearth(setup("--telegram", "--telegram-api-root", emu.apiRoot, "--handshake-timeout", "2s"), env(home), {
      onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())),
    });
    await waitFor("the handshake prompt", () => CODE_PROMPT.test(stdout));
    await emu.user({ userId: STRANGER, firstName: "Mallory" }).send("/start");
    const r = await running;
    expect(r.stdout.split("\n").slice(4)).toEqual([`✗ telegram owner: no private message with the code reached @TestNameBot in time; run setup again, or pass --telegram-owner ID`, "Nothing was written.", ""]);
    expect(r.code).toBe(1);
    expect(existsSync(home)).toBe(false);
  });
});

describe("upgrades", () => {
  it("a config.json from a newer Hearth stops start with exit 2 and a clear sentence, the file untouched", async () => {
    const home = newHome();
    mkdirSync(home, { recursive: true });
    const file = join(home, "config.json");
    writeFileSync(file, `{ "version": ${CONFIG_VERSION + 1} }\n`);
    const r = await runHearth(["start"], env(home));
    expect(r.stderr).toBe(
      `hearth: ${file} is configuration version ${CONFIG_VERSION + 1}, written by a newer Hearth; this one reads versions up to ${CONFIG_VERSION}. ` +
        `Update Hearth (git pull && npm install), or restore the file this version wrote (config.json.v${CONFIG_VERSION}.bak, if an upgrade left one).\n`,
    );
    expect(r.code).toBe(2);
    expect(readdirSync(home)).toEqual(["config.json"]);
  });
});

describe("hearth setup in a terminal", () => {
  const python = spawnSync("python3", ["--version"]).status === 0;
  it.skipIf(!python)("asks each question, checks the key and the token, confirms the owner found by the handshake, and writes the config", async () => {
    const home = newHome();
    const child = spawn("python3", [join(import.meta.dirname, "..", "support", "pty-run.py"), process.execPath, hearthBin, "setup", "--base-url", fake.url, "--telegram-api-root", emu.apiRoot], {
      cwd: repoRoot,
      env: isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", TERM: "xterm", COLUMNS: "200", LINES: "50" }),
      stdio: ["pipe", "pipe", "inherit"],
    });
    let screen = "";
    // Decoded as a stream: U+FFFD in a name is three bytes, which a chunk may split.
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => (screen += d.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      // Each answer is typed only once its question is on the screen.
      const answer = async (question: string, keys: string) => {
        await waitFor(`"${question}"`, () => screen.includes(question));
        child.stdin!.write(keys);
      };
      await answer("Which model provider?", "\r");
      await answer("Model", "\r");
      await answer("Connect a Telegram bot?", "\r");
      await answer("Telegram bot token", `${emu.token}\r`);
      await waitFor("the handshake prompt with its code", () => CODE_PROMPT.test(screen));
      const code = CODE_PROMPT.exec(screen)![1]!;
      expect(screen).toContain(codeRequest(code));
      // A message without the code is passed over without a question.
      await emu.user({ userId: STRANGER, firstName: "Mallory" }).send("/start");
      await waitFor("the stranger ignored", () => screen.includes(`Ignored a private message without the code from Mallory (id ${STRANGER})`));
      // One who has the code is shown for the owner to decline, the escapes in their name replaced.
      await emu.user({ userId: 777, firstName: HOSTILE_NAME }).send(`/start ${code}`);
      await waitFor("the hostile sender's question", () => screen.includes(`A private message with the code from ${PRINTED_NAME} (id 777)`) && screen.lastIndexOf("Is this you (the owner)?") > screen.indexOf(PRINTED_NAME));
      child.stdin!.write("n");
      await waitFor("the wait again", () => screen.includes(`Waiting for the owner's private message with the code ${code}`));
      const before = screen.length;
      await emu.user({ userId: 5151, firstName: "Bea", username: "bea" }).send(`/start ${code}`);
      await waitFor("Bea's question", () => screen.indexOf("Is this you (the owner)?", before) >= 0);
      child.stdin!.write("y");
      await answer("Connect a Discord bot?", "\r");
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
    expect(screen).toContain("accepted the key; model claude-sonnet-5-5 is there");
    expect(screen).toContain("A private message with the code from Bea (@bea, id 5151)");
    expect(screen).toContain("Start it with: npm start");
    const raw = parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any;
    expect(raw.channels.telegram).toEqual({ ownerIds: ["5151"], apiRoot: emu.apiRoot });
    expect(raw.model.baseUrl).toBe(fake.url);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nANTHROPIC_API_KEY=sk-ant-setup-test-key\nTELEGRAM_BOT_TOKEN=${emu.token}\n`);
  });
});
