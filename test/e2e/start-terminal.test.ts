// `hearth start` in a terminal says, once, that it is ready and how to talk to it; started by a
// program (stdout not a terminal, or under pm2) it prints nothing but its log.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { waitFor } from "../support/daemon.ts";

const READY = "ready — talk to it with `npx hearth chat`";
let home: string;

afterEach(() => {
  const left = home ? daemonPid(home) : undefined;
  if (left) process.kill(left, "SIGKILL");
  if (home && existsSync(home)) rmSync(home, { recursive: true, force: true });
});

function startIn(home: string, viaTerminal: boolean) {
  const env = isolatedEnv({ HEARTH_HOME: home, HEARTH_LOG: "info", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" });
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(hearthBin)} start`;
  // script(1) gives the daemon a pseudo-terminal for stdin, stdout and stderr.
  const proc = viaTerminal
    ? spawn("script", ["-qfec", command, "/dev/null"], { env, cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] })
    : spawn(process.execPath, [hearthBin, "start"], { env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  proc.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  const lines = () => output.split(/\r?\n/);
  return { proc, lines, exited };
}

/** The daemon of `home` (in a terminal its log is not JSON, so it is found by its environment). */
function daemonPid(home: string): number | undefined {
  for (const entry of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      const env = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      // Node itself, not script(1), whose command line names hearth.js too.
      if (env.includes(`HEARTH_HOME=${home}`) && argv[0] === process.execPath && argv.includes(hearthBin)) return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

describe("hearth start in a terminal (e2e)", () => {
  it.skipIf(!existsSync("/usr/bin/script"))("prints one line once it is ready: how to talk to it", async () => {
    home = mkdtempSync(join(tmpdir(), "hearth-tty-"));
    writeFileSync(join(home, "config.json"), "{}", { mode: 0o600 });
    const d = startIn(home, true);
    await waitFor("the ready line", () => d.lines().includes(READY), 30_000);
    expect(d.lines().filter((l) => l.startsWith("ready"))).toEqual([READY]);
    process.kill(daemonPid(home)!, "SIGTERM");
    expect(await d.exited).toBe(0);
  }, 60_000);

  it.skipIf(!existsSync("/usr/bin/script"))("lists a configured channel that cannot start under the ready line, with why and the fix; one not configured is not mentioned", async () => {
    home = mkdtempSync(join(tmpdir(), "hearth-tty-"));
    writeFileSync(join(home, "config.json"), JSON.stringify({ channels: { telegram: { ownerIds: ["42"] } } }), { mode: 0o600 });
    const d = startIn(home, true);
    await waitFor("the ready line", () => d.lines().includes(READY), 30_000);
    const i = d.lines().indexOf(READY);
    expect(d.lines()[i + 1]).toBe(
      `telegram is not running: no bot token (TELEGRAM_BOT_TOKEN in ${join(home, ".env")} or the environment, or channels.telegram.token in config.json): \`npx hearth setup\` adds it`,
    );
    // Discord was not configured: the owner did not want it, and is not told at every start.
    expect(d.lines().filter((l) => l.includes("not_configured"))).toEqual([]);
    process.kill(daemonPid(home)!, "SIGTERM");
    expect(await d.exited).toBe(0);
  }, 60_000);

  it.skipIf(!existsSync("/usr/bin/script"))("hearth logs shows the log of a daemon started in a terminal, as it shows pm2's", async () => {
    home = mkdtempSync(join(tmpdir(), "hearth-tty-"));
    writeFileSync(join(home, "config.json"), "{}", { mode: 0o600 });
    const d = startIn(home, true);
    await waitFor("the ready line", () => d.lines().includes(READY), 30_000);
    const env = isolatedEnv({ HEARTH_HOME: home });
    const logs = await runHearth(["logs", "-n", "1000"], env);
    expect(logs.code).toBe(0);
    expect(logs.stderr).toBe("");
    const ready = logs.stdout.split("\n").filter((l) => / info  gateway\.ready /.test(l));
    expect(ready.map((l) => l.slice(24))).toEqual([`info  gateway.ready component=gateway home=${home} channels=["cli"] pid=${daemonPid(home)}`]);
    expect(ready[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} /);
    // The files are the owner's alone, as pm2's are.
    expect(statSync(join(home, "logs", "hearth.out.log")).mode & 0o777).toBe(0o600);
    process.kill(daemonPid(home)!, "SIGTERM");
    expect(await d.exited).toBe(0);
    // Its last words are there too.
    expect((await runHearth(["logs", "-n", "1"], env)).stdout).toMatch(/ info  gateway\.stopped /);
  }, 60_000);

  it("prints no such line when its output is not a terminal", async () => {
    home = mkdtempSync(join(tmpdir(), "hearth-tty-"));
    writeFileSync(join(home, "config.json"), "{}", { mode: 0o600 });
    const d = startIn(home, false);
    await waitFor("the daemon to be ready", () => d.lines().some((l) => l.includes('"gateway.ready"')), 30_000);
    d.proc.kill("SIGTERM");
    expect(await d.exited).toBe(0);
    expect(d.lines().filter((l) => !l.startsWith("{") && l !== "")).toEqual([]);
  }, 60_000);
});
