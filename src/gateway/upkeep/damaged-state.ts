// Damaged state files the owner has not dealt with yet. A store that finds its file unusable
// sets it aside as `<name>.damaged-<time>` (storage.ts); the set-aside files themselves are the
// registry: `hearth status` and `hearth doctor` list them until the owner deletes them, so a
// notice can neither get lost nor outlive the file it is about.
import { readdirSync } from "node:fs";
import path from "node:path";
import { DAMAGED_MARK } from "../../state/damaged-mark.ts";
import { homePaths } from "../../config/home.ts";

export interface DamagedFile {
  /** The state file that was damaged, relative to the home: `sessions/index.json`. */
  file: string;
  /** The copy kept, relative to the home: `sessions/index.json.damaged-2026-11-23T10-41-07-123Z`. */
  copy: string;
}

/** Every damaged copy in the home's state folders (home, sessions/, cron/), oldest name first. */
export function listDamaged(home: string): DamagedFile[] {
  const paths = homePaths(home);
  const out: DamagedFile[] = [];
  for (const dir of [paths.home, paths.sessions, paths.cron]) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const at = name.indexOf(DAMAGED_MARK);
      if (at <= 0) continue;
      const rel = path.relative(home, path.join(dir, name));
      out.push({ file: path.join(path.dirname(rel), name.slice(0, at)), copy: rel });
    }
  }
  return out;
}

/** One line for status and doctor. */
export function describeDamaged(d: DamagedFile): string {
  return `${d.file} was damaged; the original is kept as ${d.copy} and Hearth went on with what it could read`;
}

export const DAMAGED_FIX = "look at the kept copy (restore what you need by hand), then delete it";
