// `hearth setup` as a new user meets it after the README's quick start: the last line names the
// README's `npm start`; a second run that adds a channel takes the model key from the .env the
// first one wrote; a model the endpoint does not list is asked for again, not the key; the
// dashboard is offered and, turned on, named; a daemon already running is told to restart to
// read what setup changed.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIGURABLE } from "../../src/channels/registry.ts";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  [fake, emu] = await Promise.all([startFakeModel(), startTelegramEmulator()]);
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await emu.stop();
  await fake.close();
});

function newHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "hearth-newcomer-"));
  dirs.push(dir);
  return join(dir, "home");
}

const KEY = "sk-ant-newcomer-key-123";
const HOST = () => new URL(fake.url).host;
const AS_SERVICE = "   (or as a service: npx hearth setup --non-interactive … --pm2, or npx pm2 start ecosystem.config.cjs)";
const config = (home: string) => parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as any;

describe("hearth setup --non-interactive, run again", () => {
  it("adds a channel with the model key from the .env the first run wrote, and names npm start last", async () => {
    const home = newHome();
    const first = await runHearth(["setup", "--non-interactive", "--base-url", fake.url], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: KEY }));
    expect(first.stdout).toBe(
      `Hearth setup: home ${home}\n✓ model: ${HOST()} accepted the key; model claude-sonnet-5-5 is there\n` +
        `✓ wrote ${join(home, "config.json")} (model claude-sonnet-5-5); keys and tokens in ${join(home, ".env")} (mode 600)\n` +
        `Next: npm start${AS_SERVICE}\n`,
    );
    expect(first.code).toBe(0);

    // The key is in .env only now, as the README has it; the shell has the bot token alone.
    const again = await runHearth(
      ["setup", "--non-interactive", "--base-url", fake.url, "--telegram", "--telegram-owner", "4242", "--telegram-api-root", emu.apiRoot, "--dashboard"],
      isolatedEnv({ HEARTH_HOME: home, TELEGRAM_BOT_TOKEN: emu.token }),
    );
    expect(again).toEqual({
      code: 0,
      stdout:
        `Hearth setup: home ${home}\n✓ model: ${HOST()} accepted the key; model claude-sonnet-5-5 is there\n✓ telegram: the bot is @TestNameBot\n` +
        `✓ wrote ${join(home, "config.json")} (model claude-sonnet-5-5); keys and tokens in ${join(home, ".env")} (mode 600)\n` +
        `Next: npm start${AS_SERVICE}\nThe dashboard: \`npx hearth dashboard\` opens it, once Hearth runs.\n`,
      stderr: "",
    });
    expect(config(home).channels.telegram.ownerIds).toEqual(["4242"]);
    expect(config(home).dashboard.enabled).toBe(true);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nANTHROPIC_API_KEY=${KEY}\nTELEGRAM_BOT_TOKEN=${emu.token}\n`);

    // With the daemon running, setup says it must restart to read the change.
    daemon = await startDaemon(home, { ANTHROPIC_BASE_URL: fake.url, TELEGRAM_BOT_TOKEN: emu.token });
    const running = await runHearth(["setup", "--non-interactive", "--base-url", fake.url, "--model", "claude-haiku-5"], isolatedEnv({ HEARTH_HOME: home }));
    expect(running.stdout.split("\n").slice(-2)).toEqual([`Hearth is running (pid ${daemon.proc.pid}) with the settings it started with: \`npx hearth restart\` makes it read these.`, ""]);
    expect(running.code).toBe(0);
    expect(config(home).model.name).toBe("claude-haiku-5");
    await cleanupDaemon(daemon);
    daemon = undefined;
  });
});

describe("hearth setup in a terminal, as a new user", () => {
  const python = spawnSync("python3", ["--version"]).status === 0;
  it.skipIf(!python)("a model the endpoint does not list is asked for again (not the key); the dashboard is offered; the last line names npm start", async () => {
    const home = newHome();
    const child = spawn("python3", [join(import.meta.dirname, "..", "support", "pty-run.py"), process.execPath, hearthBin, "setup", "--base-url", fake.url], {
      cwd: repoRoot,
      env: isolatedEnv({ HEARTH_HOME: home, TERM: "xterm", COLUMNS: "200", LINES: "50" }),
      stdio: ["pipe", "pipe", "inherit"],
    });
    let screen = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => (screen += d.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const count = (s: string) => screen.split(s).length - 1;
    try {
      const answer = async (question: string, keys: string, times = 1) => {
        await waitFor(`"${question}" (${times})`, () => count(question) >= times);
        child.stdin!.write(keys);
      };
      await answer("Which model provider?", "\r");
      await answer("Anthropic API key", `${KEY}\r`);
      // The model's field starts filled in: cleared, then a name the endpoint does not list.
      await answer("Model", `${"\x7f".repeat(30)}claude-nope\r`);
      await answer("Model (one of those listed)", "claude-haiku-5\r");
      await waitFor("the check", () => screen.includes("model claude-haiku-5 is there"));
      expect(screen).toContain(`${HOST()} accepted the key but does not list the model "claude-nope"; it lists claude-sonnet-5-5, claude-haiku-5`);
      // After the refusal the model alone was asked: no question for the key again.
      expect(screen.slice(screen.indexOf("does not list the model")).includes("Anthropic API key")).toBe(false);
      for (const c of CONFIGURABLE) {
        const offer = c.setup?.offer ?? c.linkSetup?.offer;
        if (offer) await answer(offer, "n");
      }
      await answer("Turn on the web dashboard", "y");
      await answer("Run Hearth as a service with pm2 now", "\r");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(screen).toContain("Start it with: npm start");
    expect(screen).toContain("The dashboard: `npx hearth dashboard` opens it, once Hearth runs.");
    expect(config(home).model.name).toBe("claude-haiku-5");
    expect(config(home).dashboard.enabled).toBe(true);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`\nANTHROPIC_API_KEY=${KEY}\n`);
  });
});
