// The everyday commands that need no daemon: completion scripts (run through a real bash),
// logs from the file pm2 and `hearth restart` write, stop when nothing runs, did-you-mean.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.ts";

let home: string;
let savedHome: string | undefined;
beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "hearth-everyday-"));
  savedHome = process.env.HEARTH_HOME;
  process.env.HEARTH_HOME = home;
});
afterAll(() => {
  if (savedHome === undefined) delete process.env.HEARTH_HOME;
  else process.env.HEARTH_HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
});

async function hearth(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: "", stderr: "" };
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
  stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
  const code = await main(args, { stdin: new PassThrough(), stdout, stderr });
  return { code, ...out };
}

/** What bash completes for the words typed so far (the last one being completed). */
function bashComplete(script: string, words: string[]): string[] {
  const file = path.join(home, "completion.bash");
  writeFileSync(file, script);
  // The function bash would call: the one `complete` registered for the first word.
  const fn = words[0] === "npx" ? "_hearth_npx" : "_hearth";
  const line = `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync("bash", ["-c", line], { encoding: "utf8" }).split("\n").filter(Boolean);
}

describe("hearth completion", () => {
  it("bash completes commands and their subcommands", async () => {
    const r = await hearth("completion", "bash");
    expect(r.code).toBe(0);
    expect(bashComplete(r.stdout, ["hearth", "st"])).toEqual(["start", "stop", "status"]);
    expect(bashComplete(r.stdout, ["hearth", "cron", ""])).toEqual(["list", "add", "rm", "run"]);
    expect(bashComplete(r.stdout, ["hearth", "completion", "f"])).toEqual(["fish"]);
    // Every command with words after it, read off its usage lines.
    expect(bashComplete(r.stdout, ["hearth", "backup", ""])).toEqual(["create", "verify", "restore"]);
    expect(bashComplete(r.stdout, ["hearth", "memory", ""])).toEqual(["log", "diff", "restore"]);
    expect(bashComplete(r.stdout, ["hearth", "mcp", "l"])).toEqual(["login", "logout"]);
    expect(bashComplete(r.stdout, ["hearth", "service", ""])).toEqual(["install", "uninstall"]);
    expect(bashComplete(r.stdout, ["hearth", "tasks", ""])).toEqual(["cancel"]);
    expect(bashComplete(r.stdout, ["hearth", "grants", ""])).toEqual(["revoke"]);
    expect(bashComplete(r.stdout, ["hearth", "hosts", ""])).toEqual(["trust"]);
  });

  it("bash completes `npx hearth …` the same, before any npm link", async () => {
    const r = await hearth("completion", "bash");
    expect(bashComplete(r.stdout, ["npx", "he"])).toEqual(["hearth"]);
    expect(bashComplete(r.stdout, ["npx", "hearth", "st"])).toEqual(["start", "stop", "status"]);
    expect(bashComplete(r.stdout, ["npx", "hearth", "cron", ""])).toEqual(["list", "add", "rm", "run"]);
    expect(bashComplete(r.stdout, ["npx", "vitest", "r"])).toEqual([]);
    expect(r.stdout).toContain("complete -o default -F _hearth_npx npx\n");
  });

  it("zsh and fish get scripts of their own; another shell is a usage error", async () => {
    expect((await hearth("completion", "zsh")).stdout).toMatch(/^#compdef hearth\n/);
    expect((await hearth("completion", "fish")).stdout).toContain('complete -c hearth -f -n "__fish_seen_subcommand_from pairing" -a "list approve revoke"\n');
    const r = await hearth("completion", "tcsh");
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe("hearth: completion takes one shell: bash, zsh, fish");
  });
});

describe("hearth logs and stop without a daemon", () => {
  it("logs says where the log would be when there is none", async () => {
    const r = await hearth("logs");
    expect(r).toEqual({ code: 1, stdout: "", stderr: `hearth: no log file at ${path.join(home, "logs", "hearth.err.log")}: Hearth has not run with this home yet\n` });
  });

  it("logs -n prints the last lines of the two files pm2 writes, in time order, readable as in a terminal", async () => {
    mkdirSync(path.join(home, "logs"));
    const line = (t: string, event: string) => `{"t":"2026-11-25T10:00:0${t}.250Z","level":"info","event":"${event}","component":"gateway","channels":["cli"]}`;
    writeFileSync(path.join(home, "logs", "hearth.out.log"), `${line("1", "a")}\n${line("3", "c")}\n${line("5", "e")}\n`);
    writeFileSync(path.join(home, "logs", "hearth.err.log"), `${line("2", "b")}\n${line("4", "d")}\nnot json, after d\n`);
    expect(await hearth("logs", "-n", "4")).toEqual({
      code: 0,
      stdout:
        '2026-11-25 10:00:03.250 info  c component=gateway channels=["cli"]\n' +
        '2026-11-25 10:00:04.250 info  d component=gateway channels=["cli"]\n' +
        "not json, after d\n" +
        '2026-11-25 10:00:05.250 info  e component=gateway channels=["cli"]\n',
      stderr: "",
    });
    // --json: the files' own lines, for jq.
    expect(await hearth("logs", "-n", "2", "--json")).toEqual({ code: 0, stdout: `not json, after d\n${line("5", "e")}\n`, stderr: "" });
  });

  it("stop with nothing running says so", async () => {
    expect(await hearth("stop")).toEqual({ code: 0, stdout: "Hearth is not running.\n", stderr: "" });
  });

  it("a mistyped everyday command gets a did-you-mean", async () => {
    const r = await hearth("stpo");
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe('hearth: Unknown command "stpo"; did you mean "stop"?');
  });

  it("a typo gets the usage of the command it most likely meant, not the whole help", async () => {
    expect(await hearth("stauts")).toEqual({
      code: 2,
      stdout: "",
      stderr: 'hearth: Unknown command "stauts"; did you mean "status"?\n\nUsage:\n  npx hearth status [--json]              channels, sessions, active runs, queues, today\'s spending\n',
    });
  });
});
