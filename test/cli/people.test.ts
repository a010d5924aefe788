// `hearth people` without a daemon: exact stdout and stderr, exit codes, and what it leaves in
// people.json and the workspace. (Through a running daemon: test/e2e/household.test.ts.)
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.ts";
import { commandUsage } from "../../src/cli/help.ts";
import { hearthCmd } from "../../src/process/hearth-command.ts";

let home: string;
let savedHome: string | undefined;
beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "hearth-people-cli-"));
  writeFileSync(path.join(home, "config.json"), JSON.stringify({ channels: { telegram: { ownerIds: ["100"] } } }), { mode: 0o600 });
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

const ws = (...p: string[]) => path.join(home, "workspace", ...p);

describe("hearth people (no daemon)", () => {
  it("lists an empty household", async () => {
    expect(await hearth("people", "list")).toEqual({ code: 0, stdout: `No people in the household. Add one with: ${hearthCmd("people add NAME --telegram ID")}\n`, stderr: "" });
    expect(await hearth("people", "list", "--json")).toEqual({ code: 0, stdout: "[]\n", stderr: "" });
  });

  it("adds a person with two accounts, a budget and tools, and makes their space", async () => {
    const r = await hearth("people", "add", "ana", "--telegram", "1002", "--whatsapp", "+4915112345678", "--budget", "2", "--allow", "web,exec");
    expect(r).toEqual({
      code: 0,
      stdout:
        "Added ana (telegram:1002, whatsapp:+4915112345678): their private chats with Hearth are one conversation of their own, with their memory in people/ana/.\n" +
        "Budget: $2.00 a day. Tools: web, exec.\n" +
        `Hearth is not running: it answers them once it is started (${hearthCmd("start")}).\n`,
      stderr: "",
    });
    for (const f of ["USER.md", "MEMORY.md", "HEARTBEAT.md"]) expect(existsSync(ws("people", "ana", f))).toBe(true);
    expect(existsSync(ws("HOUSEHOLD.md"))).toBe(true);
    const file = JSON.parse(readFileSync(path.join(home, "people.json"), "utf8"));
    expect(file.people[0]).toMatchObject({ name: "ana", accounts: ["telegram:1002", "whatsapp:+4915112345678"], dailyUsd: 2, tools: { web: true, exec: true, files: false, mcp: [] } });
  });

  it("adds a second person with defaults, links and unlinks, and lists them", async () => {
    expect((await hearth("people", "add", "bob", "--discord", "55")).stdout.split("\n")[1]).toBe("Budget: none of their own (the shared chats' daily limit applies). Tools: memory and chat only.");
    expect(await hearth("people", "link", "bob", "--telegram", "1003", "--telegram", "1004")).toEqual({ code: 0, stdout: "Linked telegram:1003, telegram:1004 to bob (now: discord:55, telegram:1003, telegram:1004).\n", stderr: "" });
    expect(await hearth("people", "unlink", "bob", "--telegram", "1004")).toEqual({ code: 0, stdout: "Unlinked telegram:1004 from bob (now: discord:55, telegram:1003).\n", stderr: "" });
    expect(await hearth("people", "list")).toEqual({
      code: 0,
      stdout:
        "ana  telegram:1002, whatsapp:+4915112345678\n    Budget: $2.00 a day. Tools: web, exec.\n" +
        "bob  discord:55, telegram:1003\n    Budget: none of their own (the shared chats' daily limit applies). Tools: memory and chat only.\n",
      stderr: "",
    });
    expect(await hearth("people", "set", "bob", "--budget", "0.50", "--allow", "files,mcp:github")).toEqual({ code: 0, stdout: "Changed bob. Budget: $0.50 a day. Tools: files, mcp:github.\n", stderr: "" });
  });

  it("refuses the owner's account, an account taken and an unknown person (exit 1), naming the fix", async () => {
    expect(await hearth("people", "add", "cy", "--telegram", "100")).toEqual({ code: 1, stdout: "", stderr: "hearth: telegram:100 is yours (channels.telegram.ownerIds): your own accounts are the owner's, never a person's.\n" });
    expect(await hearth("people", "link", "bob", "--telegram", "1002")).toEqual({ code: 1, stdout: "", stderr: `hearth: telegram:1002 is already ana's; an account belongs to one person. Unlink it first: \`${hearthCmd("people unlink ana --telegram 1002")}\`.\n` });
    expect(await hearth("people", "remove", "zoe")).toEqual({ code: 1, stdout: "", stderr: `hearth: No person named "zoe" in the household (there are: ana, bob); \`${hearthCmd("people list")}\` shows them.\n` });
    expect(existsSync(ws("people", "cy"))).toBe(false);
  });

  it("refuses bad usage with exit 2 and the usage, before touching anything", async () => {
    const usage = commandUsage("people");
    const cases: Array<[string[], string]> = [
      [["people"], "people needs an action: list, add, link, unlink, set or remove."],
      [["people", "adopt"], 'Unknown people action "adopt". Use list, add, link, unlink, set or remove.'],
      [["people", "add", "Ana", "--telegram", "1"], 'Ana is not a valid name: lowercase letters, digits and "-", starting with a letter and not ending with "-", at most 32 characters (e.g. ana, bob-2).'],
      [["people", "add", "cy"], "people add needs at least one account: people add cy --telegram ID | --discord ID | …"],
      [["people", "add", "cy", "--telegram", "1", "--budget", "lots"], '--budget takes dollars a day, e.g. --budget 2 or --budget 0.50 (got "lots").'],
      [["people", "add", "cy", "--telegram", "1", "--allow", "cron_add"], '"cron_add" is not a tool a person can be allowed: use web, exec, files or mcp:SERVER (a name under mcp.servers), or "none".'],
      [["people", "add", "cy", "--irc", "1"], "Unknown option '--irc'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--irc\""],
      [["people", "set", "ana"], "people set needs what to change: people set ana [--budget USD|none] [--allow web,exec,files,mcp:SERVER|none]"],
      [["people", "remove"], "people remove needs exactly one name: people remove NAME …"],
    ];
    for (const [args, message] of cases) {
      const r = await hearth(...args);
      expect(r, args.join(" ")).toEqual({ code: 2, stdout: "", stderr: `hearth: ${message.replace(/^Ana/, '"Ana"')}\n\n${usage}` });
    }
    expect(existsSync(ws("people", "cy"))).toBe(false);
  });

  it("removes a person, keeping their files unless --delete-files", async () => {
    expect(await hearth("people", "remove", "ana")).toEqual({ code: 0, stdout: "Removed ana from the household. Their files stay in people/ana/ in the workspace.\n", stderr: "" });
    expect(existsSync(ws("people", "ana", "USER.md"))).toBe(true);
    expect(await hearth("people", "remove", "bob", "--delete-files")).toEqual({ code: 0, stdout: "Removed bob from the household and deleted people/bob/.\n", stderr: "" });
    expect(existsSync(ws("people", "bob"))).toBe(false);
    expect((await hearth("people", "list", "--json")).stdout).toBe("[]\n");
  });
});
