// The command line itself: usage errors are caught before anything connects (and so never hang
// on a running daemon), every command has its own help, the version prints, and a closed pipe
// on stdout ends the command quietly.
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon;
let home: string;
beforeAll(async () => {
  fake = await startFakeModel();
  home = makeHome({});
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

const env = () => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });

const PAIRING_USAGE = `Usage:
  npx hearth pairing list                 pending pairing codes and approved senders
  npx hearth pairing approve CODE         let the person who got CODE talk to Hearth
  npx hearth pairing revoke CHANNEL:USERID
`;

describe("usage errors with a daemon running", () => {
  const cases: Array<[string[], string]> = [
    [["pairing"], "pairing needs an action: list, approve or revoke."],
    [["pairing", "foo"], 'Unknown pairing action "foo". Use list, approve or revoke.'],
    [["pairing", "approve"], "pairing approve needs the code: pairing approve CODE"],
    [["pairing", "revoke", "12345"], "pairing revoke needs CHANNEL:USERID, with CHANNEL one of telegram, discord, slack, matrix, signal, whatsapp, email (e.g. telegram:123456)."],
    [["pairing", "list", "extra"], 'pairing list takes no argument (got "extra").'],
    [["cron"], "cron needs an action: list, add, rm or run."],
    [["cron", "rm"], "cron rm needs exactly one job id: cron rm ID (`npx hearth cron list` shows the ids)."],
    [["cron", "run", "a", "b"], "cron run needs exactly one job id: cron run ID (`npx hearth cron list` shows the ids)."],
    [["cron", "list", "--bogus"], "Unknown option '--bogus'"],
    [["chat", "--shout"], "Unknown option '--shout'"],
    [["chat", "-m", "  "], "The message is empty."],
    [["dashboard", "--url", "--rotate"], "--url and --rotate do not go together."],
  ];
  for (const [args, message] of cases) {
    it(`hearth ${args.join(" ")}: exit 2 at once with that command's usage only`, async () => {
      const started = Date.now();
      const r = await runHearth(args, env(), { timeoutMs: 5_000 });
      expect(r.code).toBe(2);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(r.stdout).toBe("");
      expect(r.stderr.split("\n\nUsage:\n")[0]).toBe(`hearth: ${message}`);
      if (args[0] === "pairing") expect(r.stderr).toBe(`hearth: ${message}\n\n${PAIRING_USAGE}`);
      expect(r.stderr).not.toContain("Commands:");
    });
  }
  it("hearth dashboard on a daemon whose dashboard is off: exit 1, saying how to turn it on", async () => {
    const r = await runHearth(["dashboard"], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe('hearth: The dashboard is off. Turn it on with "dashboard": { "enabled": true } in config.json, then restart Hearth.\n');
  });
  it("the daemon answered none of them (no model call, still running)", async () => {
    expect(fake.requests).toHaveLength(0);
    expect((await runHearth(["status"], env())).code).toBe(0);
  });
});

describe("help and version", () => {
  it("--version prints the package version", async () => {
    const r = await runHearth(["--version"], env());
    expect(r).toEqual({ code: 0, stdout: "hearth 0.1.0\n", stderr: "" });
  });

  it("`help pairing` and `pairing --help` print the pairing usage on stdout and exit 0", async () => {
    expect(await runHearth(["help", "pairing"], env())).toEqual({ code: 0, stdout: PAIRING_USAGE, stderr: "" });
    expect(await runHearth(["pairing", "--help"], env())).toEqual({ code: 0, stdout: PAIRING_USAGE, stderr: "" });
  });

  it("every command has --help", async () => {
    for (const c of ["start", "chat", "status", "doctor", "init", "cron", "pairing"]) {
      const r = await runHearth([c, "--help"], env());
      expect(r.code, c).toBe(0);
      expect(r.stdout.startsWith(`Usage:\n  npx hearth ${c}`), r.stdout).toBe(true);
    }
    const chat = await runHearth(["chat", "--help"], env());
    expect(chat.stdout).toBe(
      "Usage:\n" +
        "  npx hearth chat                         talk with Hearth in this terminal (your main session)\n" +
        '  npx hearth chat -m "TEXT"               send one message; the reply streams to stdout\n' +
        "  npx hearth chat -m TEXT --attach FILE   attach a picture, PDF, text file or voice note (repeatable; /attach PATH in chat)\n",
    );
  });

  it("`help` lists every command", async () => {
    const r = await runHearth(["help"], env());
    expect(r.code).toBe(0);
    for (const c of ["start", "chat", "status", "doctor", "init", "cron list", "pairing list", "help [COMMAND]", "--version"]) expect(r.stdout).toContain(`\n  ${c}`);
  });
});

describe("a closed stdout", () => {
  it("`hearth doctor | head -1` ends quietly: no stack trace, no EPIPE", async () => {
    const child = spawn(process.execPath, [hearthBin, "doctor"], { env: env(), cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // Like `head -1` that has already read its line: nobody reads stdout any more.
    child.stdout.destroy();
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    expect(stderr).toBe("");
    expect(code === 0 || code === 1).toBe(true);
  });
});

describe("a broken config", () => {
  it("is reported once, with its path and the key, exit 2, by start and chat alike", async () => {
    const broken = makeHome(undefined);
    try {
      writeFileSync(`${broken}/config.json`, '{ "agent": { "maxTurns": "lots" } }');
      const expected =
        `hearth: ${broken}/config.json: invalid configuration\n` +
        "✖ Invalid input: expected number, received string\n" +
        "  → at agent.maxTurns\n" +
        "Fix the file and try again (a key that is left out takes its default).\n";
      const brokenEnv = isolatedEnv({ HEARTH_HOME: broken, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
      for (const args of [["start"], ["chat", "-m", "hi"]]) {
        expect(await runHearth(args, brokenEnv), args.join(" ")).toEqual({ code: 2, stdout: "", stderr: expected });
      }
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
});

describe("the gateway lock", () => {
  it("is taken over at start when it names a live pid that is not the Hearth that wrote it (pid reuse)", async () => {
    const other = makeHome({});
    let second: Daemon | undefined;
    try {
      // pid 1 is alive, but started at another time than the lock says.
      writeFileSync(`${other}/gateway.lock`, JSON.stringify({ pid: 1, startTicks: "1", bootId: null, startedAt: "2026-01-01T00:00:00.000Z" }));
      second = await startDaemon(other, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
      expect((await second.hearth(["status"])).code).toBe(0);
    } finally {
      await cleanupDaemon(second, other);
    }
  });
});
