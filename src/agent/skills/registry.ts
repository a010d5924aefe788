// The skills of the workspace (`<workspace>/skills/<name>/SKILL.md`): which load, which are
// broken and why, and which scope may see each. Reloaded on the watcher's events for files under
// skills/, so an added, edited or removed skill counts on the next run without a restart.
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../../process/log.ts";
import type { Scope } from "../messages.ts";
import { parseSkillFile, type FrontMatter } from "./front-matter.ts";

export const SKILLS_DIR = "skills";
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
/** A SKILL.md larger than this is not a procedure but a book: refused, so a scan stays cheap. */
const MAX_SKILL_FILE_BYTES = 256 * 1024;

export interface Skill {
  name: string;
  /** One line: the front matter's description with its whitespace collapsed. */
  description: string;
  scope: Scope;
  /** `skills/<name>`, relative to the workspace. */
  folder: string;
  /** `skills/<name>/SKILL.md`. */
  file: string;
  /** The whole front matter, optional fields (license, metadata, allowed-tools…) included. */
  frontMatter: FrontMatter;
}

export interface SkillProblem {
  /** `skills/<folder>`. */
  folder: string;
  error: string;
}

export interface SkillScan {
  skills: Skill[];
  problems: SkillProblem[];
}

/** Reads every skill folder of `workspace`, sorted by name. Never throws. */
export function scanSkills(workspace: string): SkillScan {
  const root = path.join(workspace, SKILLS_DIR);
  const skills: Skill[] = [];
  const problems: SkillProblem[] = [];
  let entries: string[];
  try {
    entries = readdirSync(root).filter((e) => !e.startsWith(".")).sort();
  } catch {
    return { skills, problems };
  }
  for (const dir of entries) {
    const r = loadSkill(workspace, dir);
    if (r === null) continue;
    if ("error" in r) problems.push(r);
    else skills.push(r);
  }
  return { skills, problems };
}

function loadSkill(workspace: string, dir: string): Skill | SkillProblem | null {
  const folder = `${SKILLS_DIR}/${dir}`;
  const fail = (error: string): SkillProblem => ({ folder, error });
  const abs = path.join(workspace, folder);
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return null;
  if (st.isSymbolicLink()) return fail("the folder is a link; skills must be real folders inside the workspace");
  if (!st.isDirectory()) return null;
  const fileAbs = path.join(abs, "SKILL.md");
  const fst = lstatSync(fileAbs, { throwIfNoEntry: false });
  if (!fst) return fail("no SKILL.md in the folder");
  if (!fst.isFile()) return fail("SKILL.md is not a plain file (links are not followed)");
  if (fst.size > MAX_SKILL_FILE_BYTES) return fail(`SKILL.md is ${fst.size} bytes; the limit is ${MAX_SKILL_FILE_BYTES}`);
  let text: string;
  try {
    text = readFileSync(fileAbs, "utf8");
  } catch (err) {
    return fail(`SKILL.md cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const parsed = parseSkillFile(text);
  if (!parsed.ok) return fail(`invalid front matter: ${parsed.error}`);
  const { name, description, scope } = parsed.data;
  if (typeof name !== "string" || name === "") return fail('invalid front matter: "name" is missing');
  if (!NAME.test(name) || name.length > MAX_NAME) return fail(`invalid front matter: name "${name}" must be lowercase letters, digits and single hyphens, at most ${MAX_NAME} characters`);
  if (name !== dir) return fail(`invalid front matter: name "${name}" must equal the folder name "${dir}"`);
  if (typeof description !== "string" || description.trim() === "") return fail('invalid front matter: "description" is missing');
  const oneLine = description.replace(/\s+/g, " ").trim();
  if (oneLine.length > MAX_DESCRIPTION) return fail(`invalid front matter: the description is ${oneLine.length} characters; the limit is ${MAX_DESCRIPTION}`);
  if (scope !== undefined && scope !== "main" && scope !== "shared") return fail(`invalid front matter: scope must be "main" or "shared", not ${JSON.stringify(scope)}`);
  return { name, description: oneLine, scope: scope === "shared" ? "shared" : "main", folder, file: `${folder}/SKILL.md`, frontMatter: parsed.data };
}

const SKILLS_INTRO =
  "Skills: procedures for particular tasks. When a task matches a skill, read its SKILL.md with the read tool before acting, and follow it; the files it mentions are in its folder.";

/** The system prompt's skills section: one line per skill, name order; "" when there is none. */
export function skillsPromptBlock(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  return [SKILLS_INTRO, ...skills.map((s) => `- ${s.name}: ${s.description} (${s.file})`)].join("\n");
}

export interface SkillRegistryOptions {
  workspace: string;
  log: Logger;
}

export class SkillRegistry {
  readonly #workspace: string;
  readonly #log: Logger;
  #scan: SkillScan = { skills: [], problems: [] };
  #blocks = new Map<Scope, string>();

  constructor(opts: SkillRegistryOptions) {
    this.#workspace = opts.workspace;
    this.#log = opts.log;
    this.reload();
  }

  /** Scans the skills folder again; logs skills that became invalid and changes of the list. */
  reload(): void {
    const before = this.#scan;
    this.#scan = scanSkills(this.#workspace);
    const known = new Set(before.problems.map((p) => `${p.folder}\0${p.error}`));
    for (const p of this.#scan.problems) if (!known.has(`${p.folder}\0${p.error}`)) this.#log.warn("skills.invalid", { folder: p.folder, error: p.error, action: "left out until SKILL.md is fixed" });
    const blocks = new Map<Scope, string>([
      ["main", skillsPromptBlock(this.forScope("main"))],
      ["shared", skillsPromptBlock(this.forScope("shared"))],
    ]);
    if (blocks.get("main") !== this.#blocks.get("main") && this.#blocks.size > 0) this.#log.info("skills.changed", { skills: this.#scan.skills.map((s) => s.name) });
    this.#blocks = blocks;
  }

  /**
   * Call with every workspace event (relative path); reloads when it concerns a skill. Cheap
   * for any other path.
   */
  noteWorkspaceEvent(relPath: string): void {
    if (relPath === SKILLS_DIR || relPath.startsWith(`${SKILLS_DIR}/`)) this.reload();
  }

  list(): readonly Skill[] {
    return this.#scan.skills;
  }

  problems(): readonly SkillProblem[] {
    return this.#scan.problems;
  }

  /** Main sees every valid skill; a shared scope only those marked `scope: shared`. */
  forScope(scope: Scope): Skill[] {
    return this.#scan.skills.filter((s) => scope === "main" || s.scope === "shared");
  }

  /** The prompt block of `scope`: the same string object until a name, description or path changes. */
  promptBlock(scope: Scope): string {
    return this.#blocks.get(scope) ?? "";
  }

  /** Real absolute folders of the shared skills: all that a shared scope's `read` may open. */
  sharedFolders(): string[] {
    let root: string;
    try {
      root = realpathSync(this.#workspace);
    } catch {
      return [];
    }
    return this.forScope("shared").map((s) => path.join(root, s.folder));
  }
}
