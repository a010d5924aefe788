// Which workspace files the memory history records, and how it reads and writes them: markdown
// files reached through real folders, never a link; media folders and hidden names left out.
// A file is only ever written back to its own path, so the history never moves one scope's
// bytes into another's folder.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../state/storage.ts";
import { blobOid } from "./git-store.ts";
import { Slices } from "./slices.ts";

/** A markdown file outside any `media/` folder, with no hidden or empty part and no `..`. */
export function isTracked(relPath: string): boolean {
  const parts = relPath.split("/");
  if (!relPath.endsWith(".md")) return false;
  return parts.every((p) => p !== "" && p !== "." && p !== ".." && !p.startsWith(".") && p !== "media");
}

/** Daily logs (`memory/YYYY-MM-DD.md`, a chat's `memory/chats/<slug>/YYYY-MM-DD.md`): the record of what was said. */
export function isDailyLog(relPath: string): boolean {
  return /^memory\/(chats\/[^/]+\/)?\d{4}-\d{2}-\d{2}\.md$/u.test(relPath);
}

interface Seen {
  sig: string;
  oid: string;
}

/** Walks the workspace's tracked files; a stat cache spares re-reading files that did not change. */
export class TrackedFiles {
  readonly workspace: string;
  private readonly cache = new Map<string, Seen>();
  constructor(workspace: string) {
    this.workspace = workspace;
  }

  /** Every tracked file now: path → blob id. Links and special files are skipped. */
  scan(): Map<string, string> {
    const out = new Map(this.walk(this.workspace, ""));
    this.forgetAllBut(out);
    return out;
  }

  /**
   * scan, in slices that yield to the event loop (a first scan reads and hashes every file: a
   * second or more for 10,000); null when `shouldStop` ends it first.
   */
  async scanInSlices(opts: { shouldStop?: () => boolean } = {}): Promise<Map<string, string> | null> {
    const out = new Map<string, string>();
    const slices = new Slices(opts);
    for (const [relPath, oid] of this.walk(this.workspace, "")) {
      out.set(relPath, oid);
      if (!(await slices.next())) return null;
    }
    this.forgetAllBut(out);
    return out;
  }

  private *walk(dir: string, rel: string): Generator<[string, string]> {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".") || name === "media") continue;
      const relPath = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path.join(dir, name), { throwIfNoEntry: false });
      if (st?.isDirectory()) yield* this.walk(path.join(dir, name), relPath);
      else if (st?.isFile() && isTracked(relPath)) {
        const sig = `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}`;
        const cached = this.cache.get(relPath);
        if (cached?.sig === sig) yield [relPath, cached.oid];
        else {
          const bytes = this.read(relPath);
          if (!bytes) continue;
          const oid = blobOid(bytes);
          this.cache.set(relPath, { sig, oid });
          yield [relPath, oid];
        }
      }
    }
  }

  private forgetAllBut(present: Map<string, string>): void {
    for (const p of this.cache.keys()) if (!present.has(p)) this.cache.delete(p);
  }

  /** The file's bytes; null when it is missing, not a regular file, or reached through a link. */
  read(relPath: string): Buffer | null {
    if (!isTracked(relPath) || !this.realFolders(relPath)) return null;
    let fd: number;
    try {
      fd = openSync(path.join(this.workspace, relPath), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return null;
    }
    try {
      if (!fstatSync(fd).isFile()) return null;
      // Sized from the file (not a large buffer per read: 10,000 small notes made that the cost).
      return readFileSync(fd);
    } catch {
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Puts `bytes` at `relPath` (null: removes the file), replacing it atomically, mode 600. A
   * link in its place is replaced, never followed; a folder on the way that is a link refuses.
   */
  write(relPath: string, bytes: Buffer | null): void {
    if (!isTracked(relPath)) throw new Error(`${relPath} is not a file the memory history records`);
    const parts = relPath.split("/");
    let dir = this.workspace;
    for (const part of parts.slice(0, -1)) {
      dir = path.join(dir, part);
      const st = lstatSync(dir, { throwIfNoEntry: false });
      if (!st && bytes !== null) mkdirSync(dir, { mode: 0o700 });
      else if (st && !st.isDirectory()) throw new Error(`${relPath}: ${path.relative(this.workspace, dir)} is not a real folder`);
    }
    const abs = path.join(this.workspace, relPath);
    if (bytes === null) rmSync(abs, { force: true });
    else writeFileAtomic(abs, bytes);
    this.cache.delete(relPath);
  }

  private realFolders(relPath: string): boolean {
    let dir = this.workspace;
    for (const part of relPath.split("/").slice(0, -1)) {
      dir = path.join(dir, part);
      if (!lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
    }
    return true;
  }
}
