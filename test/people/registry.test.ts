// The household's registry (people.json) and each person's space: names and accounts checked
// with errors that say what to type, one account for one person, never the owner's, the file
// written atomically and read back, a hand edit seen at the next lookup, a damaged file set aside.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addPerson, removePerson } from "../../src/people/household.ts";
import { parseTools, PeopleError } from "../../src/people/person.ts";
import { PeopleRegistry } from "../../src/people/registry.ts";
import { createLogger } from "../../src/process/log.ts";
import { NewerStateError } from "../../src/state/storage.ts";

const log = createLogger({ level: "silent" });
const owners = (channel: string) => (channel === "telegram" ? ["100"] : []);
let dir: string;
let file: string;
let workspace: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hearth-people-"));
  file = path.join(dir, "people.json");
  workspace = path.join(dir, "workspace");
  mkdirSync(workspace);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const open = (clock = () => 1_000) => PeopleRegistry.open(file, log, clock);
const error = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(PeopleError);
    return (err as Error).message;
  }
  throw new Error("no error");
};

describe("PeopleRegistry", () => {
  it("adds a person with their accounts, and writes people.json exactly", () => {
    const r = open();
    const ana = r.add({ name: "ana", accounts: ["telegram:1002", "discord:55"], dailyUsd: 2.5, tools: parseTools("web,mcp:github") }, owners);
    expect(ana).toEqual({ name: "ana", accounts: ["telegram:1002", "discord:55"], dailyUsd: 2.5, tools: { web: true, exec: false, files: false, mcp: ["github"] }, addedAt: 1_000 });
    expect(readFileSync(file, "utf8")).toBe(
      `{\n "version": 1,\n "people": [\n  {\n   "name": "ana",\n   "accounts": [\n    "telegram:1002",\n    "discord:55"\n   ],\n   "dailyUsd": 2.5,\n   "tools": {\n    "web": true,\n    "exec": false,\n    "files": false,\n    "mcp": [\n     "github"\n    ]\n   },\n   "addedAt": 1000\n  }\n ]\n}\n`,
    );
    expect(open().personOf("telegram", "1002")?.name).toBe("ana");
    expect(open().personOf("discord", "55")?.name).toBe("ana");
    expect(open().personOf("telegram", "55")).toBeNull();
    // No temp file is left beside it.
    expect(readdirSync(dir).sort()).toEqual(["people.json", "workspace"]);
  });

  it("refuses bad names, unknown channels, empty ids, the owner's account and an account taken, saying what to do", () => {
    const r = open();
    expect(error(() => r.add({ name: "Ana", accounts: ["telegram:1"] }, owners))).toBe('"Ana" is not a valid name: lowercase letters, digits and "-", starting with a letter and not ending with "-", at most 32 characters (e.g. ana, bob-2).');
    for (const bad of ["../bob", "ana/x", "a-", "1ana", "", "a".repeat(33), "ana.md"]) expect(() => r.add({ name: bad, accounts: ["telegram:1"] }, owners)).toThrow(PeopleError);
    expect(error(() => r.add({ name: "ana", accounts: ["irc:1"] }, owners))).toBe('"irc" is not a chat channel; use one of telegram, discord, slack, matrix, signal, whatsapp, email.');
    expect(error(() => r.add({ name: "ana", accounts: ["telegram: "] }, owners))).toMatch(/^" " is not a telegram user id: give the id as telegram names the sender \(no spaces\)/);
    expect(error(() => r.add({ name: "ana", accounts: [] }, owners))).toBe("ana needs at least one account, e.g. --telegram 123456789.");
    expect(error(() => r.add({ name: "ana", accounts: ["telegram:100"] }, owners))).toBe("telegram:100 is yours (channels.telegram.ownerIds): your own accounts are the owner's, never a person's.");
    r.add({ name: "ana", accounts: ["telegram:1002"] }, owners);
    expect(error(() => r.add({ name: "ana", accounts: ["telegram:7"] }, owners))).toMatch(/^ana is already in the household; `.*people link ana --CHANNEL ID` adds an account\.$/);
    expect(error(() => r.add({ name: "bob", accounts: ["telegram:1002"] }, owners))).toMatch(/^telegram:1002 is already ana's; an account belongs to one person\. Unlink it first: `.*people unlink ana --telegram 1002`\.$/);
    expect(error(() => r.link("bob", ["telegram:9"], owners))).toMatch(/^No person named "bob" in the household \(there are: ana\); `.*people list` shows them\.$/);
    expect(error(() => r.link("ana", ["telegram:100"], owners))).toBe("telegram:100 is yours (channels.telegram.ownerIds): your own accounts are the owner's, never a person's.");
    // Nothing was written by any refusal.
    expect(open().list().map((p) => [p.name, p.accounts])).toEqual([["ana", ["telegram:1002"]]]);
  });

  it("links, unlinks, changes budget and tools, removes", () => {
    const r = open();
    r.add({ name: "ana", accounts: ["telegram:1002"] }, owners);
    expect(r.link("ana", ["whatsapp:+4915112345678", "telegram:1002"], owners).accounts).toEqual(["telegram:1002", "whatsapp:+4915112345678"]);
    expect(r.unlink("ana", ["telegram:1002"]).accounts).toEqual(["whatsapp:+4915112345678"]);
    expect(error(() => r.unlink("ana", ["telegram:1002"]))).toBe("telegram:1002 is not ana's (theirs: whatsapp:+4915112345678).");
    expect(r.set("ana", { dailyUsd: 3, tools: parseTools("exec,files") })).toMatchObject({ dailyUsd: 3, tools: { web: false, exec: true, files: true, mcp: [] } });
    expect(r.set("ana", { dailyUsd: null }).dailyUsd).toBeUndefined();
    expect(error(() => r.set("ana", { dailyUsd: -1 }))).toBe("-1 is not a daily budget: give a positive number of dollars, e.g. 2 or 0.50.");
    expect(r.remove("ana").name).toBe("ana");
    expect(open().list()).toEqual([]);
  });

  it("parses the tools the owner allows, and refuses others", () => {
    expect(parseTools("none")).toEqual({ web: false, exec: false, files: false, mcp: [] });
    expect(parseTools("web, exec,files,mcp:a,mcp:a")).toEqual({ web: true, exec: true, files: true, mcp: ["a"] });
    expect(() => parseTools("cron_add")).toThrow('"cron_add" is not a tool a person can be allowed: use web, exec, files or mcp:SERVER (a name under mcp.servers), or "none".');
    expect(() => parseTools("mcp:../x")).toThrow(PeopleError);
  });

  it("sees a hand edit at the next lookup", () => {
    const r = open();
    r.add({ name: "ana", accounts: ["telegram:1002"] }, owners);
    const data = JSON.parse(readFileSync(file, "utf8"));
    data.people[0].accounts.push("telegram:1003");
    writeFileSync(file, JSON.stringify(data));
    expect(r.personOf("telegram", "1003")?.name).toBe("ana");
  });

  it("a missing file is an empty household, and nothing is written until someone is added", () => {
    expect(open().list()).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it("keeps the valid people of a damaged file and sets the file aside; drops an account listed twice", () => {
    writeFileSync(file, JSON.stringify({ version: 1, people: [
      { name: "ana", accounts: ["telegram:1"], tools: { web: false, exec: false, files: false, mcp: [] }, addedAt: 1 },
      { name: "Bad Name", accounts: [], addedAt: 1 },
      { name: "bob", accounts: ["telegram:1"], addedAt: 1 },
      { name: "cy", accounts: ["telegram:3"], addedAt: 1 },
    ] }));
    const r = open();
    expect(r.list().map((p) => p.name)).toEqual(["ana", "cy"]);
    expect(r.personOf("telegram", "1")?.name).toBe("ana");
    expect(readdirSync(dir).filter((n) => n.startsWith("people.json.damaged-"))).toHaveLength(1);
    writeFileSync(file, "{ not json");
    expect(open().list()).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.startsWith("people.json.damaged-"))).toHaveLength(2);
  });

  it("refuses a file a newer Hearth wrote, leaving it as it is", () => {
    writeFileSync(file, JSON.stringify({ version: 2, people: [] }));
    expect(() => open()).toThrow(NewerStateError);
    expect(JSON.parse(readFileSync(file, "utf8")).version).toBe(2);
  });
});

describe("a person's space", () => {
  const deps = () => ({ people: open(), workspace, owners });

  it("is made on add, with HOUSEHOLD.md at the top; existing files are kept", () => {
    mkdirSync(path.join(workspace, "people", "ana"), { recursive: true });
    writeFileSync(path.join(workspace, "people", "ana", "MEMORY.md"), "- kept\n");
    const { created } = addPerson(deps(), { name: "ana", accounts: ["telegram:1002"] });
    expect(created).toEqual(["people/ana/USER.md", "people/ana/HEARTBEAT.md", "HOUSEHOLD.md"]);
    expect(readFileSync(path.join(workspace, "people/ana/MEMORY.md"), "utf8")).toBe("- kept\n");
    expect(readFileSync(path.join(workspace, "people/ana/USER.md"), "utf8")).toBe("# About ana\n\nWho ana is and how they like to be helped. Only ana's own conversations read this file.\n");
    expect(lstatSync(path.join(workspace, "people/ana/memory")).isDirectory()).toBe(true);
    expect(readFileSync(path.join(workspace, "HOUSEHOLD.md"), "utf8")).toMatch(/^# Household\n/);
  });

  it("is refused where a link stands in for a folder, and the person is not added", () => {
    mkdirSync(path.join(dir, "elsewhere"));
    symlinkSync(path.join(dir, "elsewhere"), path.join(workspace, "people"));
    expect(() => addPerson(deps(), { name: "ana", accounts: ["telegram:1002"] })).toThrow("people in the workspace is not a real folder (a link or a file); move it away, then try again.");
    expect(open().list()).toEqual([]);
    expect(readdirSync(path.join(dir, "elsewhere"))).toEqual([]);
  });

  it("stays on remove unless asked, and is deleted with --delete-files", () => {
    addPerson(deps(), { name: "ana", accounts: ["telegram:1002"] });
    addPerson(deps(), { name: "bob", accounts: ["telegram:1003"] });
    for (const d of ["people", "people/bob", "people/bob/memory"]) expect((lstatSync(path.join(workspace, d)).mode & 0o777).toString(8)).toBe("700");
    expect((lstatSync(path.join(workspace, "people/bob/MEMORY.md")).mode & 0o777).toString(8)).toBe("600");
    expect(removePerson(deps(), "ana", false)).toMatchObject({ space: "people/ana", deleted: false });
    expect(existsSync(path.join(workspace, "people/ana/USER.md"))).toBe(true);
    expect(removePerson(deps(), "bob", true)).toMatchObject({ space: "people/bob", deleted: true });
    expect(existsSync(path.join(workspace, "people/bob"))).toBe(false);
    expect(existsSync(path.join(workspace, "HOUSEHOLD.md"))).toBe(true);
  });
});
