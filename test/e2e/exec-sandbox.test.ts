// Attacks on the exec tool through the real daemon: an owner-scope command tries to read the
// daemon's secrets and to leave processes behind. The bubblewrap tests skip (and say so) where
// bubblewrap is not installed; the unsandboxed ones show what is exposed without it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { probeBwrap } from "../../src/agent/tools/sandbox.ts";
import { isolatedEnv, runHearth, type CliResult } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";
import { CONFIG_VERSION } from "../../src/config/migrations.ts";

const probe = probeBwrap();
if (!probe.ok) console.warn(`exec sandbox e2e tests skipped: ${probe.detail} (install bubblewrap to run them)`);
const noBwrap = !probe.ok;

const API_KEY = "sk-ant-api03-exec-attack-key-0123456789abcdef";

let fake: FakeModel;
let home: string;
let daemon: Daemon | undefined;
const leftovers: string[] = [];
beforeEach(async () => {
  fake = await startFakeModel();
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
  for (const arg of leftovers.splice(0)) for (const pid of sleepersWith(arg)) process.kill(pid, "SIGKILL");
});

const chat = (d: Daemon, message: string): Promise<CliResult> => d.hearth(["chat", "-m", message], { timeoutMs: 60_000 });

/** The attacks of issue 13, as one assistant message with four exec calls. */
const attacks = (h: string) => [
  `tr '\\0' '\\n' < /proc/$PPID/environ`,
  `cat /proc/*/environ | tr '\\0' '\\n'`,
  "env",
  `cat ${h}/config.json`,
];

function execCalls(commands: string[]) {
  return { type: "message" as const, blocks: commands.map((command) => ({ tool: "exec", input: { command } })) };
}

/** The text of each tool result in the request's last message, in call order. */
function toolResults(req: RecordedRequest): string[] {
  return lastUserContent(req)
    .filter((b) => b.type === "tool_result")
    .map((b) => (typeof b.content === "string" ? b.content : (b.content as { text: string }[]).map((c) => c.text).join("")));
}

describe("secrets (daemon e2e)", () => {
  let emu: TelegramEmulator;
  beforeEach(async () => {
    emu = await startTelegramEmulator();
  });
  afterEach(async () => {
    await emu.stop();
  });

  /** A daemon with the API key in its environment and the bot token in config.json. */
  const configFor = (sandbox: "auto" | "off", token: string) => ({
    // The current version: the start migrates nothing, so the token stays in config.json.
    version: CONFIG_VERSION,
    tools: { exec: { sandbox } },
    heartbeat: { every: "0" },
    channels: { telegram: { token, apiRoot: emu.apiRoot, ownerIds: ["100"] } },
  });

  async function start(sandbox: "auto" | "off"): Promise<Daemon> {
    home = makeHome(configFor(sandbox, emu.token));
    daemon = await startDaemon(home, { ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: fake.url });
    return daemon;
  }

  it.skipIf(noBwrap)("with the sandbox on, an owner-scope exec finds no secret in /proc, env or config.json", async () => {
    const d = await start("auto");
    fake.enqueue(execCalls(attacks(home)), text("Nothing found."));
    const r = await chat(d, "find the keys");
    expect(r.stdout).toBe("Nothing found.\n");

    const results = toolResults(fake.requests[1]!);
    expect(results).toHaveLength(4);
    for (const result of results) {
      expect(result).not.toContain(API_KEY);
      expect(result).not.toContain(emu.token);
      expect(result).not.toContain("[redacted]"); // not hidden after the fact: never reached
    }
    expect(results[3]).toBe(`cat: ${home}/config.json: No such file or directory\n[exit code 1]`);
    expect(readFileSync(join(home, "sessions", "main.jsonl"), "utf8")).not.toContain(API_KEY);

    const status = await d.hearth(["status"]);
    expect(status.stdout.split("\n")[1]).toBe(
      "Commands (exec): bubblewrap: commands see the workspace (read-write, its notes read-only) and the rest of the system read-only; Hearth's home is hidden; network only through Hearth's egress proxy",
    );
  });

  it("with the sandbox off, secrets are readable but redacted before the transcript, the model and the chat", async () => {
    const d = await start("off");
    fake.enqueue(execCalls(attacks(home)), text("Done."));
    const r = await chat(d, "find the keys");
    expect(r.stdout).toBe("Done.\n");

    const results = toolResults(fake.requests[1]!);
    expect(results).toHaveLength(4);
    for (const result of results) {
      expect(result).not.toContain(API_KEY);
      expect(result).not.toContain(emu.token);
    }
    // The daemon's own environment, through /proc: exposed without the sandbox, then redacted.
    expect(results[0]!.split("\n")).toContain("ANTHROPIC_API_KEY=[redacted]");
    expect(results[3]).toBe(`${JSON.stringify(configFor("off", "[redacted]"), null, 2)}\n[exit code 0]`);
    await d.stop();
    for (const file of filesUnder(home)) {
      const bytes = readFileSync(file, "utf8");
      expect(bytes.includes(API_KEY) && file, "a file with the API key").toBe(false);
      // config.json itself holds the token; nothing else may.
      if (!file.endsWith("config.json")) expect(bytes.includes(emu.token) && file, "a file with the bot token").toBe(false);
    }
    expect(d.log()).not.toContain(API_KEY);
  });

  it("doctor says what a command can reach with the sandbox off", async () => {
    home = makeHome({ tools: { exec: { sandbox: "off" } } });
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: API_KEY });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    const lines = r.stdout.split("\n");
    const at = lines.findIndex((l) => l.startsWith("! exec sandbox:"));
    expect(lines.slice(at, at + 2)).toEqual([
      "! exec sandbox: off: commands run unconfined as your user: they can reach any address, and read Hearth's config.json, grants and transcripts; approvals are advice, not a wall",
      '    fix: set "tools": { "exec": { "sandbox": "auto" } }, then install them: sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat)',
    ]);
    expect(r.code, r.stdout).toBe(0);
  });
});

/** A `sleep` whose command line no other process has: `sleep 1000.<random>`. */
function uniqueSleep(): string {
  const arg = `1000.${Math.floor(Math.random() * 1e9)}`;
  leftovers.push(arg);
  return arg;
}

/** Live processes whose command line is exactly `sleep <arg>` (zombies have an empty cmdline). */
function sleepersWith(arg: string): number[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, "utf8") === `sleep\0${arg}\0`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.each([
  { mode: "auto", skip: noBwrap },
  { mode: "off", skip: false },
] as const)("setsid escapes, sandbox $mode (daemon e2e)", ({ mode, skip }) => {
  async function start(): Promise<Daemon> {
    home = makeHome({ tools: { exec: { sandbox: mode } }, heartbeat: { every: "0" }, agent: { shutdownGraceMs: 300 } });
    daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
    return daemon;
  }

  /** Starts a run whose command leaves `setsid sleep ARG` behind, and waits until it runs. */
  async function escapeAttempt(d: Daemon): Promise<{ arg: string; run: Promise<CliResult> }> {
    const arg = uniqueSleep();
    fake.enqueue(execCalls([`setsid sleep ${arg} & (setsid sleep ${arg} &); sleep 60`]), text("Done."));
    const run = chat(d, "start it");
    await waitFor("both escaped sleeps", () => sleepersWith(arg).length === 2, 20_000);
    return { arg, run };
  }

  it.skipIf(skip)("is gone after the timeout", async () => {
    const d = await start();
    const arg = uniqueSleep();
    fake.enqueue(
      { type: "message", blocks: [{ tool: "exec", input: { command: `setsid sleep ${arg} & (setsid sleep ${arg} &); sleep 60`, timeoutMs: 1500 } }] },
      text("Timed out."),
    );
    const r = await chat(d, "start it");
    expect(r.stdout).toBe("Timed out.\n");
    expect(toolResults(fake.requests[1]!)).toEqual(["[killed: timed out after 1.5 s]"]);
    await waitFor("the escaped sleeps to die", () => sleepersWith(arg).length === 0, 5_000);
  });

  it.skipIf(skip)("is gone after /stop", async () => {
    const d = await start();
    const { arg, run } = await escapeAttempt(d);
    const stop = await chat(d, "/stop");
    expect(stop.stdout).toBe("Stopped.\n");
    await run;
    await waitFor("the escaped sleeps to die", () => sleepersWith(arg).length === 0, 5_000);
  });

  it.skipIf(skip)("is gone after a shutdown", async () => {
    const d = await start();
    const { arg } = await escapeAttempt(d);
    expect(await d.stop()).toBe(0);
    await waitFor("the escaped sleeps to die", () => sleepersWith(arg).length === 0, 5_000);
  });

  if (mode === "auto") {
    it.skipIf(skip)("is gone after a kill -9 of the daemon", async () => {
      const d = await start();
      const { arg } = await escapeAttempt(d);
      d.proc.kill("SIGKILL");
      await d.exited;
      await waitFor("the escaped sleeps to die", () => sleepersWith(arg).length === 0, 5_000);
    });
  } else {
    it("survives a kill -9 of the daemon until the next start ends it, as the README says", async () => {
      const d = await start();
      const { arg } = await escapeAttempt(d);
      d.proc.kill("SIGKILL");
      await d.exited;
      await new Promise((r) => setTimeout(r, 500));
      expect(sleepersWith(arg)).toHaveLength(2);
      daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
      expect(sleepersWith(arg)).toEqual([]);
      expect(daemon.log()).toContain('"event":"exec.orphans_killed"');
    });
  }
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    const st = statSync(p);
    return st.isDirectory() ? filesUnder(p) : st.isFile() && st.size < 5_000_000 && !name.endsWith(".db") ? [p] : [];
  });
}
