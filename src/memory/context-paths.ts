// The workspace paths whose words enter a context: the notes every system prompt is made of, the
// heartbeat's checklist, the daily logs and chats' folders (people's notes among them) and the
// skills. Whatever a run writes there speaks in every later run, so they are the one place a
// tainted run could launder its taint: commands never write them (the sandbox binds them
// read-only), the file tools refuse them in a tainted run, and memory_write from one is asked.
import path from "node:path";
import { IDENTITY_FILES, PRIVATE_FILES } from "./visibility.ts";

/** Files at the workspace's top level. */
export const CONTEXT_FILES: readonly string[] = [...IDENTITY_FILES, ...PRIVATE_FILES];
/** Folders at the workspace's top level, with everything under them: daily logs, chats' folders, skills. */
export const CONTEXT_DIRS: readonly string[] = ["memory", "skills"];

/** Whether `relPath` (relative to the workspace, either separator) is a context file or lies in a context folder. */
export function isContextPath(relPath: string): boolean {
  const norm = path.posix.normalize(relPath.split(path.sep).join("/")).replace(/^(\.\/)+/, "");
  if (CONTEXT_FILES.includes(norm)) return true;
  const top = norm.split("/", 1)[0]!;
  return CONTEXT_DIRS.includes(top);
}
