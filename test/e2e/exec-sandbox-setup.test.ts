// How the sandbox setting meets the machine: `hearth start`, `hearth doctor` and `hearth init`
// with bubblewrap missing or broken (a PATH without it, or a bwrap that fails like one on a
// kernel without user namespaces), and the permissions of a config.json that holds secrets.
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall } from "../support/fake-model.ts";

const KEY = "sk-ant-api03-setup-test-key-0123456789";
const INSTALL = "sudo apt-get install bubblewrap socat (Debian/Ubuntu; dnf/pacman: packages bubblewrap and socat)";

let home: string;
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A folder for PATH: empty (no bwrap), or with a bwrap that fails like one without user namespaces. */
function pathDir(withBrokenBwrap: boolean): string {
  const dir = join(home, "bin");
  mkdirSync(dir, { recursive: true });
  if (withBrokenBwrap) writeFileSync(join(dir, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", { mode: 0o755 });
  return dir;
}

const doctorLines = (stdout: string, name: string) => {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => l.slice(2).startsWith(`${name}:`));
  return at < 0 ? [] : lines.slice(at, at + 2);
};

describe("the sandbox setting on a machine without bubblewrap", () => {
  it('"bwrap" refuses to start, saying how to install it', async () => {
    home = makeHome({ tools: { exec: { sandbox: "bwrap" } }, heartbeat: { every: "0" } });
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: KEY, PATH: pathDir(false), HEARTH_LOG: "silent" });
    const r = await runHearth(["start"], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'hearth: tools.exec.sandbox is "bwrap" but bubblewrap (bwrap) is not installed.\n' +
        `  Install it: ${INSTALL}\n` +
        '  or set "tools": { "exec": { "sandbox": "off" } } in config.json to run commands unconfined (approvals are then advice, not a wall).\n',
    );
    expect(r.stdout).toBe("");
  });

  it('"auto": exec is refused with one sentence naming the fix, hearth status and doctor say so; "off" runs the command and doctor warns', async () => {
    home = makeHome({ heartbeat: { every: "0" } });
    const fake = await startFakeModel();
    let d: Daemon | undefined;
    try {
      const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, PATH: pathDir(false) };
      d = await startDaemon(home, env);
      fake.enqueue(toolCall("exec", { command: "echo ran > ran.txt" }), text("Could not run it."));
      const chat = await d.hearth(["chat", "-m", "run it"]);
      expect(chat.stdout).toBe("Could not run it.\n");
      const body = JSON.parse(fake.requests.at(-1)!.rawBody) as { messages: { content: { type: string; content?: string }[] }[] };
      expect(body.messages.at(-1)!.content.find((b) => b.type === "tool_result")!.content).toBe(
        `Commands cannot run: bubblewrap (bwrap) is not installed, and Hearth runs commands only in its sandbox. The owner can install it: ${INSTALL} (or set tools.exec.sandbox to "off" to run commands unconfined).`,
      );
      const status = await d.hearth(["status"]);
      expect(status.stdout).toContain(`Commands (exec): unavailable (bubblewrap (bwrap) is not installed): exec refuses every command; install it: ${INSTALL}\n`);
      const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home, ...env }));
      expect(doctorLines(r.stdout, "exec sandbox")).toEqual([
        "✗ exec sandbox: unavailable (bubblewrap (bwrap) is not installed): exec refuses every command",
        `    fix: install it: ${INSTALL}`,
      ]);
      await d.stop();
      d = undefined;

      writeFileSync(join(home, "config.json"), JSON.stringify({ heartbeat: { every: "0" }, tools: { exec: { sandbox: "off" } } }));
      d = await startDaemon(home, { ...env, PATH: `${pathDir(false)}:/usr/bin:/bin` });
      fake.enqueue(toolCall("exec", { command: "echo ran > ran.txt" }), text("Ran it."));
      expect((await d.hearth(["chat", "-m", "run it now"])).stdout).toBe("Ran it.\n");
      const off = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home, ...env }));
      expect(doctorLines(off.stdout, "exec sandbox")).toEqual([
        "! exec sandbox: off: commands run unconfined as your user: they can reach any address, and read Hearth's config.json, grants and transcripts; approvals are advice, not a wall",
        `    fix: set "tools": { "exec": { "sandbox": "auto" } }, then install them: ${INSTALL}`,
      ]);
    } finally {
      if (d && d.proc.exitCode === null) await d.stop();
      await fake.close();
    }
  });

  it('"auto" with a bwrap that cannot create namespaces: doctor names the cause and its fix', async () => {
    home = makeHome();
    const bin = pathDir(true);
    writeFileSync(join(bin, "socat"), "#!/bin/sh\n", { mode: 0o755 });
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: KEY, PATH: bin });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    const [line, fix] = doctorLines(r.stdout, "exec sandbox");
    // The cause (and so the fix) is the machine's: a container, AppArmor's restriction, a sysctl.
    expect(line).toMatch(new RegExp(`^✗ exec sandbox: unavailable \\(${bin.replace(/[/.]/g, "\\$&")}/bwrap cannot create namespaces here \\(bwrap: setting up uid map: Permission denied\\); .+\\): exec refuses every command$`));
    expect(fix).toMatch(/^ {4}fix: \S/);
    expect(r.code).toBe(1);
  });
});

describe("config.json permissions", () => {
  it("hearth init creates config.json readable by the owner only", async () => {
    home = makeHome();
    await runHearth(["init"], isolatedEnv({ HEARTH_HOME: home }));
    expect(statSync(join(home, "config.json")).mode & 0o777).toBe(0o600);
  });

  it("doctor fails a config.json that holds a secret and others can read, and names the fix", async () => {
    home = makeHome({ model: { apiKey: KEY } });
    const file = join(home, "config.json");
    chmodSync(file, 0o644);
    const env = isolatedEnv({ HEARTH_HOME: home });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    expect(doctorLines(r.stdout, "config file")).toEqual([
      `✗ config file: ${file} holds a secret and is readable by other users (mode 644)`,
      `    fix: chmod 600 ${file}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain(KEY);

    chmodSync(file, 0o600);
    expect(doctorLines((await runHearth(["doctor"], env)).stdout, "config file")).toEqual([]);
  });
});
