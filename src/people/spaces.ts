// A person's private space in the workspace, `people/<name>/`, made when they are added: their
// USER.md, MEMORY.md, HEARTBEAT.md and `memory/` for their daily logs, in the shape of the
// owner's; and HOUSEHOLD.md at the workspace's top, what everyone in the household may see.
// Files that exist are kept as they are (a person added again finds their notes). Every folder
// on the way must be a real folder: a link there would let a person's run reach what it leads
// to, so it is refused, and the memory opener refuses it again on every read.
import { closeSync, constants, lstatSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { HOUSEHOLD_FILE, PERSON_SPACE_FILES, PERSON_SPACES_DIR, personSpaceDir } from "../memory/visibility.ts";
import { checkName, PeopleError } from "./person.ts";

const HOUSEHOLD_TEMPLATE = `# Household

What everyone in the household may know: shared calendar facts, the wifi name, house rules.
Your conversations and every person's read this file; nothing private belongs here.
`;

const template = (file: (typeof PERSON_SPACE_FILES)[number], name: string): string => {
  switch (file) {
    case "USER.md":
      return `# About ${name}\n\nWho ${name} is and how they like to be helped. Only ${name}'s own conversations read this file.\n`;
    case "MEMORY.md":
      return `# ${name}'s memory\n\nLasting facts from ${name}'s conversations. Only ${name}'s own conversations read this file.\n`;
    case "HEARTBEAT.md":
      return `# ${name}'s checklist\n\n`;
    default:
      return file satisfies never;
  }
};

/** Makes `people/<name>/` with its files and HOUSEHOLD.md where missing; returns the files it created (workspace-relative). Throws PeopleError. */
export function createSpace(workspace: string, name: string): string[] {
  checkName(name);
  const created: string[] = [];
  // A home whose daemon never ran has no workspace yet; the daemon's start would make it too.
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  realFolder(workspace, PERSON_SPACES_DIR);
  realFolder(workspace, personSpaceDir(name));
  realFolder(workspace, `${personSpaceDir(name)}/memory`);
  for (const file of PERSON_SPACE_FILES) if (createFile(workspace, `${personSpaceDir(name)}/${file}`, template(file, name))) created.push(`${personSpaceDir(name)}/${file}`);
  if (createFile(workspace, HOUSEHOLD_FILE, HOUSEHOLD_TEMPLATE)) created.push(HOUSEHOLD_FILE);
  return created;
}

/** Deletes `people/<name>/` and everything in it (a link in its place: the link alone); false when there was none. */
export function deleteSpace(workspace: string, name: string): boolean {
  checkName(name);
  const parent = path.join(workspace, PERSON_SPACES_DIR);
  const st = lstatOrNull(parent);
  if (!st) return false;
  if (!st.isDirectory()) throw new PeopleError(`${PERSON_SPACES_DIR}/ in the workspace is not a real folder (a link?); delete ${personSpaceDir(name)}/ by hand.`);
  const dir = path.join(parent, name);
  if (!lstatOrNull(dir)) return false;
  // rmSync removes links themselves, never what they lead to.
  rmSync(dir, { recursive: true, force: true });
  return true;
}

/** `rel` under `workspace` as a real folder (made 0700 when missing); throws PeopleError when something else is there. */
function realFolder(workspace: string, rel: string): void {
  const abs = path.join(workspace, rel);
  try {
    mkdirSync(abs, { mode: 0o700 });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new PeopleError(`Could not make ${rel}/ in the workspace (${(err as NodeJS.ErrnoException).code ?? String(err)}).`);
  }
  if (!lstatSync(abs).isDirectory()) throw new PeopleError(`${rel} in the workspace is not a real folder (a link or a file); move it away, then try again.`);
}

/** Creates `rel` with `text` (0600) unless something is there already; true when it made it. */
function createFile(workspace: string, rel: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path.join(workspace, rel), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new PeopleError(`Could not create ${rel} in the workspace (${(err as NodeJS.ErrnoException).code ?? String(err)}).`);
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

function lstatOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}
