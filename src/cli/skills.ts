// `hearth skills` (what loads, what is broken and why) and `hearth skills add PATH|GIT_URL`,
// which shows a skill's SKILL.md and scripts, asks, then copies it into <workspace>/skills/.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseSkillFile } from "../agent/skills/front-matter.ts";
import { scanSkills, SKILLS_DIR, type SkillScan } from "../agent/skills/registry.ts";
import { loadConfig } from "../config/config.ts";
import { parse, UsageError } from "./args.ts";
import { hearthCmd } from "../process/hearth-command.ts";

interface SkillsIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const SCRIPT = /\.(sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl|php|ps1|bat|cmd)$/i;
const MAX_SHOWN_LINES = 200;

export async function runSkills(home: string, args: string[], io: SkillsIO): Promise<number> {
  const [action, ...rest] = args;
  const config = loadConfig({ home });
  if (action === undefined || action === "list") {
    if (rest.length) throw new UsageError(`Unexpected arguments: ${rest.join(" ")}`);
    const scan = scanSkills(config.workspace);
    io.stdout.write(formatSkills(scan, path.join(config.workspace, SKILLS_DIR)));
    return scan.problems.length ? 1 : 0;
  }
  if (action === "add") {
    const { values, positionals } = parse(rest, { yes: { type: "boolean", short: "y" } }, true);
    if (positionals.length !== 1) throw new UsageError("skills add needs exactly one PATH or GIT_URL.");
    return addSkill(config.workspace, positionals[0]!, values.yes === true, io);
  }
  throw new UsageError(`Unknown skills action "${action}".`);
}

export function formatSkills(scan: SkillScan, folder: string): string {
  if (scan.skills.length === 0 && scan.problems.length === 0) return `No skills yet. Add one with \`${hearthCmd("skills add PATH|GIT_URL")}\`, or create ${folder}/<name>/SKILL.md.\n`;
  const lines = scan.skills.map((s) => `✓ ${s.name} (${s.scope}): ${s.description}`);
  for (const p of scan.problems) lines.push(`✗ ${p.folder}: ${p.error} — left out until fixed`);
  return `${lines.join("\n")}\n`;
}

/** doctor: one line for the skills that load, one problem per skill left out. */
export function checkSkills(workspace: string): Array<{ name: string; ok: boolean; detail: string; fix?: string }> {
  const scan = scanSkills(workspace);
  const loaded = scan.skills.length ? `${scan.skills.length} loaded (${scan.skills.map((s) => `${s.name}${s.scope === "shared" ? " [shared]" : ""}`).join(", ")})` : "none";
  return [
    { name: "skills", ok: true, detail: loaded },
    ...scan.problems.map((p) => ({ name: "skill", ok: false, detail: `${p.folder}: ${p.error}`, fix: `edit ${path.join(workspace, p.folder, "SKILL.md")}: it needs front matter with name (the folder's name) and description` })),
  ];
}

async function addSkill(workspace: string, source: string, yes: boolean, io: SkillsIO): Promise<number> {
  const staging = mkdtempSync(path.join(tmpdir(), "hearth-skill-"));
  try {
    const folder = fetchSource(source, staging);
    const entry = checkFolder(folder);
    const target = path.join(workspace, SKILLS_DIR, entry.name);
    if (existsSync(target)) throw new Error(`${target} already exists. Remove it first to replace the skill.`);

    io.stdout.write(`Skill "${entry.name}" from ${source}\n\n── SKILL.md ──\n${entry.skillText.trimEnd()}\n`);
    for (const f of entry.files) {
      if (!f.script) continue;
      io.stdout.write(`\n── ${f.rel} (script) ──\n${shown(readFileSync(path.join(folder, f.rel), "utf8"))}\n`);
    }
    io.stdout.write(`\nFiles: ${entry.files.map((f) => f.rel).join(", ")}\n`);
    if (!yes && !(await confirm(io, `Add "${entry.name}" to ${path.join(workspace, SKILLS_DIR)}? The agent may follow it and run its scripts. [y/N] `))) {
      io.stderr.write("Not added.\n"); // exit 1: its reason goes where every error does
      return 1;
    }
    mkdirSync(path.dirname(target), { recursive: true });
    // Copied beside its place, then renamed in: the watcher never sees half a skill.
    const temp = path.join(path.dirname(target), `.${entry.name}.adding-${process.pid}`);
    rmSync(temp, { recursive: true, force: true });
    cpSync(folder, temp, { recursive: true, filter: (src) => path.basename(src) !== ".git" });
    renameSync(temp, target);
    io.stdout.write(`Added skill "${entry.name}" (${entry.scope}) at ${target}. A running Hearth picks it up on its next run.\n`);
    return 0;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** A local folder as it is, else a git URL cloned into `staging`. Returns the skill folder. */
function fetchSource(source: string, staging: string): string {
  const local = path.resolve(source);
  if (existsSync(local)) {
    if (!statSync(local).isDirectory()) throw new Error(`${source} is not a folder; give the skill's folder (the one holding SKILL.md).`);
    return local;
  }
  if (!/^(https?:\/\/|ssh:\/\/|git@|file:\/\/|git:\/\/)/.test(source)) throw new Error(`${source} is neither a folder nor a git URL (https://…, git@…, ssh://…, file://…).`);
  const dest = path.join(staging, "clone");
  const r = spawnSync("git", ["clone", "--depth", "1", "--quiet", "--", source, dest], {
    encoding: "utf8",
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
    timeout: 120_000,
  });
  if (r.error) throw new Error(`git could not run (${(r.error as NodeJS.ErrnoException).code ?? r.error.message}); install git to add skills from a URL.`);
  if (r.status !== 0) throw new Error(`git clone of ${source} failed: ${(r.stderr || "").trim().split("\n").at(-1) ?? "no detail"}`);
  return dest;
}

interface Checked {
  name: string;
  scope: string;
  skillText: string;
  files: Array<{ rel: string; script: boolean }>;
}

function checkFolder(folder: string): Checked {
  const skillFile = path.join(folder, "SKILL.md");
  if (!existsSync(skillFile)) throw new Error(`${folder} has no SKILL.md at its top; give the skill's own folder.`);
  const files: Checked["files"] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === ".git") continue;
      const abs = path.join(dir, name);
      const rel = path.relative(folder, abs).split(path.sep).join("/");
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) throw new Error(`${rel} is a link; a skill must be plain files (links could reach outside the workspace).`);
      if (st.isDirectory()) walk(abs);
      else files.push({ rel, script: SCRIPT.test(name) || (st.mode & 0o111) !== 0 });
    }
  };
  walk(folder);
  // Checked with the daemon's own rules, in a throwaway workspace, so what is added also loads.
  const probe = mkdtempSync(path.join(tmpdir(), "hearth-skill-check-"));
  try {
    const text = readFileSync(skillFile, "utf8");
    const parsed = parseSkillFile(text);
    if (!parsed.ok) throw new Error(`SKILL.md is not valid: invalid front matter: ${parsed.error}`);
    const name = parsed.data.name;
    if (typeof name !== "string" || !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
      throw new Error(`SKILL.md is not valid: its name must be lowercase letters, digits and single hyphens (found ${JSON.stringify(name ?? null)})`);
    }
    const dir = path.join(probe, SKILLS_DIR, name);
    mkdirSync(dir, { recursive: true });
    cpSync(skillFile, path.join(dir, "SKILL.md"));
    const scan = scanSkills(probe);
    if (scan.problems.length) throw new Error(`SKILL.md is not valid: ${scan.problems[0]!.error}`);
    const skill = scan.skills[0];
    if (!skill) throw new Error("SKILL.md could not be read as a skill.");
    return { name: skill.name, scope: skill.scope, skillText: text, files };
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

function shown(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines.length <= MAX_SHOWN_LINES ? lines.join("\n") : `${lines.slice(0, MAX_SHOWN_LINES).join("\n")}\n[… ${lines.length - MAX_SHOWN_LINES} more lines]`;
}

async function confirm(io: SkillsIO, question: string): Promise<boolean> {
  io.stdout.write(question);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once("line", resolve);
      rl.once("close", () => resolve(""));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
