// The extension commands as a user runs them: `hearth skills`, `hearth skills add` from a folder
// and from a git repository (local, never the network), and doctor's skill and server checks.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";

const FAULT = fileURLToPath(new URL("../support/fault-mcp-server.ts", import.meta.url));
let home: string;
let src: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-extcli-"));
  src = mkdtempSync(join(tmpdir(), "hearth-extsrc-"));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(src, { recursive: true, force: true });
});

const env = () => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-test-key-123456" });
const ws = () => join(home, "workspace");
const SKILL = "---\nname: weather\ndescription: Look up the weather for a city.\nscope: shared\n---\nRun scripts/forecast.sh CITY and summarise it.\n";
const SCRIPT = "#!/bin/sh\ncurl -s \"wttr.in/$1?format=3\"\n";

function makeSkillFolder(dir: string): void {
  mkdirSync(join(dir, "scripts"), { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), SKILL);
  writeFileSync(join(dir, "scripts", "forecast.sh"), SCRIPT, { mode: 0o755 });
  writeFileSync(join(dir, "README.txt"), "notes\n");
}

const shownBeforeAsking = (source: string) =>
  `Skill "weather" from ${source}\n\n── SKILL.md ──\n${SKILL.trimEnd()}\n\n── scripts/forecast.sh (script) ──\n${SCRIPT.trimEnd()}\n\nFiles: README.txt, SKILL.md, scripts/forecast.sh\n`;

describe("hearth skills", () => {
  it("lists loaded skills with their scope and the broken ones with the reason", async () => {
    mkdirSync(join(ws(), "skills", "alpha"), { recursive: true });
    writeFileSync(join(ws(), "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: First.\n---\nbody\n");
    mkdirSync(join(ws(), "skills", "beta"), { recursive: true });
    writeFileSync(join(ws(), "skills", "beta", "SKILL.md"), "no front matter at all\n");
    const r = await runHearth(["skills"], env());
    expect(r.stdout).toBe("✓ alpha (main): First.\n✗ skills/beta: invalid front matter: no front matter: SKILL.md must start with a line of three dashes (---) — left out until fixed\n");
    expect(r.code).toBe(1);
  });

  it("add shows SKILL.md and the scripts, and copies nothing when the answer is no", async () => {
    makeSkillFolder(src);
    const r = await runHearth(["skills", "add", src], env(), { input: "n\n" });
    expect(r.stdout).toBe(`${shownBeforeAsking(src)}Add "weather" to ${join(ws(), "skills")}? The agent may follow it and run its scripts. [y/N] `);
    expect(r.stderr).toBe("Not added.\n");
    expect(r.code).toBe(1);
    expect(existsSync(join(ws(), "skills", "weather"))).toBe(false);
  });

  it("add copies a folder byte for byte once the owner says yes", async () => {
    makeSkillFolder(src);
    const r = await runHearth(["skills", "add", src], env(), { input: "y\n" });
    const target = join(ws(), "skills", "weather");
    expect(r.stdout).toBe(
      `${shownBeforeAsking(src)}Add "weather" to ${join(ws(), "skills")}? The agent may follow it and run its scripts. [y/N] Added skill "weather" (shared) at ${target}. A running Hearth picks it up on its next run.\n`,
    );
    expect(r.code).toBe(0);
    expect(readFileSync(join(target, "SKILL.md"), "utf8")).toBe(SKILL);
    expect(readFileSync(join(target, "scripts", "forecast.sh"), "utf8")).toBe(SCRIPT);
    expect((await runHearth(["skills"], env())).stdout).toBe("✓ weather (shared): Look up the weather for a city.\n");
    const again = await runHearth(["skills", "add", src, "--yes"], env());
    expect(again.stderr).toBe(`hearth: ${target} already exists. Remove it first to replace the skill.\n`);
    expect(again.code).toBe(1);
  });

  it("add clones a git repository with the system's git, without its .git folder", async () => {
    makeSkillFolder(src);
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd: src, stdio: "ignore" });
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "skill");
    const url = `file://${src}`;
    const r = await runHearth(["skills", "add", url, "--yes"], env());
    expect(r.stdout).toBe(`${shownBeforeAsking(url)}Added skill "weather" (shared) at ${join(ws(), "skills", "weather")}. A running Hearth picks it up on its next run.\n`);
    expect(readdirSync(join(ws(), "skills", "weather")).sort()).toEqual(["README.txt", "SKILL.md", "scripts"]);
  });

  it("add refuses a folder whose SKILL.md is invalid", async () => {
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, "SKILL.md"), "---\nname: ../../escape\ndescription: x\n---\n");
    const r = await runHearth(["skills", "add", src, "--yes"], env());
    expect(r.stderr).toBe('hearth: SKILL.md is not valid: its name must be lowercase letters, digits and single hyphens (found "../../escape")\n');
    expect(r.code).toBe(1);
  });
});

describe("hearth doctor and hearth mcp without a daemon", () => {
  it("check each skill and start each server", async () => {
    mkdirSync(join(ws(), "skills", "alpha"), { recursive: true });
    writeFileSync(join(ws(), "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: First.\n---\n");
    mkdirSync(join(ws(), "skills", "beta"), { recursive: true });
    writeFileSync(join(ws(), "skills", "beta", "SKILL.md"), "---\nname: gamma\ndescription: Misnamed.\n---\n");
    const servers = { good: { command: process.execPath, args: [FAULT] }, bad: { command: process.execPath, args: [FAULT, "--crash-at-start"] }, off: { command: "nothing", enabled: false } };
    writeFileSync(join(home, "config.json"), JSON.stringify({ mcp: { servers } }));
    const r = await runHearth(["doctor"], env(), { timeoutMs: 60_000 });
    const lines = r.stdout.split("\n");
    const at = lines.findIndex((l) => l.startsWith("✓ skills:"));
    expect(lines.slice(at, at + 7)).toEqual([
      "✓ skills: 1 loaded (alpha)",
      '✗ skill: skills/beta: invalid front matter: name "gamma" must equal the folder name "beta"',
      `    fix: edit ${join(ws(), "skills", "beta", "SKILL.md")}: it needs front matter with name (the folder's name) and description`,
      "✗ mcp bad: does not start: the server exited before it was ready: fault server: refusing to start (--crash-at-start)",
      "    fix: run its command by hand to see why, or fix mcp.servers.bad in config.json",
      "✓ mcp good: starts (stdio) and lists 6 tools",
      "✓ mcp off: disabled (enabled: false)",
    ]);
    expect(r.code).toBe(1);

    const m = await runHearth(["mcp"], env(), { timeoutMs: 60_000 });
    expect(m.stderr).toBe("Hearth is not running: starting the servers here to check them.\n");
    expect(m.stdout).toBe(
      "SERVER           STATE     VIA   SCOPE  TOOLS\n" +
        "bad              down      stdio main   0 tools\n" +
        "    last error: the server exited before it was ready: fault server: refusing to start (--crash-at-start)\n" +
        "good             ready     stdio main   6 tools\n" +
        "off              disabled  stdio main   -\n",
    );
  });
});
