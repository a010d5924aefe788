// One file's versions in the memory history, newest first: the commits that changed it, with
// its blob before and after each. `hearth memory log FILE` and the dashboard's Memory page read
// the history through this one walk.
import type { GitStore, HistoryCommit } from "./git-store.ts";

export interface FileChange {
  commit: HistoryCommit;
  /** The file's blob before and after the commit; null where it did not exist. */
  before: string | null;
  after: string | null;
}

/** Every commit, newest first, that changed `file` (every commit when `file` is undefined); at most `limit`. */
export async function fileChanges(store: GitStore, file: string | undefined, limit = Infinity): Promise<FileChange[]> {
  const out: FileChange[] = [];
  let oid = store.head();
  let files = await store.files(oid);
  while (oid && out.length < limit) {
    const commit = await store.readCommit(oid);
    const parentFiles = await store.files(commit.parent);
    const [before, after] = file ? [parentFiles.get(file) ?? null, files.get(file) ?? null] : [null, null];
    if (!file || before !== after) out.push({ commit, before, after });
    oid = commit.parent;
    files = parentFiles;
  }
  return out;
}

/** A commit's first line: "owner: edit USER.md". */
export const commitSubject = (c: HistoryCommit): string => c.message.split("\n")[0]!;
