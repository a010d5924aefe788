// The memory history's storage: a bare git repository at `<home>/history.git`, outside the
// workspace (so no tool, search or sandboxed command reaches it). One branch, `main`. A commit is
// the whole tree of tracked files, built from a path → blob map. Recording, which happens every
// minute in the daemon, writes loose objects itself (a zlib-deflated `type size\0body` under
// `objects/xx/…`: a few lines, no library to load); reading — `/undo`, `hearth memory …` — goes
// through isomorphic-git (pure JS, loaded on first use), which also reads packs should the owner
// ever run `git gc` on it. Any git reads the repository.
//
// Objects are written with asynchronous file calls (deflated, written, fsynced and renamed off the
// event loop), so a first commit of a large workspace never stalls the daemon; their folders are
// fsynced once per commit, before the ref names them. A process stopped midway leaves complete
// loose objects no ref names (the next commit reuses them), never a head that names a missing one.
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { deflate } from "node:zlib";
import { writeFileAtomic } from "../../state/storage.ts";

const deflateAsync = promisify(deflate);

/**
 * Objects deflated at once. Each zlib stream holds about 270 KB of native memory until it ends;
 * a commit of a hundred changed files once deflated 32 at a time, and every such peak raised the
 * high-water mark of the allocator's main heap, which it keeps: the week-long soak saw RSS step
 * up 6–13 MB at history commits. Two keep the thread pool busy and the peak under 1 MB.
 */
export const DEFLATES_AT_ONCE = 2;

export type Author = "hearth" | "owner";

/** A tracked file's content id: git's blob sha1, computed without loading git. */
export function blobOid(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

export interface HistoryCommit {
  oid: string;
  parent: string | null;
  author: Author;
  /** Milliseconds since the epoch. */
  at: number;
  message: string;
  tree: string;
}

const PEOPLE: Record<Author, { name: string; email: string }> = {
  hearth: { name: "Hearth", email: "hearth@localhost" },
  owner: { name: "owner", email: "owner@localhost" },
};

type Git = typeof import("isomorphic-git");
let gitModule: Promise<Git> | null = null;
const loadGit = () => (gitModule ??= import("isomorphic-git").then((m) => (m.default ?? m) as Git));

export class GitStore {
  readonly gitdir: string;
  /** Object folders known to exist (no mkdir per object). */
  private readonly objectDirs = new Set<string>();
  /** Folders that gained an entry since the last commit: fsynced before a ref may name what they hold. */
  private readonly unsyncedDirs = new Set<string>();
  /** Objects being written now, by id: the same bytes twice in one batch are written once. */
  private readonly writing = new Map<string, Promise<void>>();
  private readonly deflate: (raw: Buffer) => Promise<Buffer>;
  /** Deflates in progress, and those waiting for one of them to end. */
  private deflating = 0;
  private readonly deflateQueue: Array<() => void> = [];
  private constructor(gitdir: string, deflate: (raw: Buffer) => Promise<Buffer>) {
    this.gitdir = gitdir;
    this.deflate = deflate;
  }

  /**
   * Opens the repository, creating it (mode 700) when `create` and it is missing; null when
   * missing and not `create`. `deflate` replaces zlib's (tests count how many run at once).
   */
  static async open(gitdir: string, opts: { create: boolean; deflate?: (raw: Buffer) => Promise<Buffer> }): Promise<GitStore | null> {
    if (!fs.existsSync(path.join(gitdir, "HEAD"))) {
      if (!opts.create) return null;
      for (const dir of ["objects", "refs/heads", "refs/tags"]) fs.mkdirSync(path.join(gitdir, dir), { recursive: true, mode: 0o700 });
      writeFileAtomic(path.join(gitdir, "config"), "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n");
      // HEAD last: its presence says the repository is complete.
      writeFileAtomic(path.join(gitdir, "HEAD"), "ref: refs/heads/main\n");
    }
    return new GitStore(gitdir, opts.deflate ?? deflateAsync);
  }

  private get refFile(): string {
    return path.join(this.gitdir, "refs", "heads", "main");
  }

  /** The newest commit's id; null before the first. */
  head(): string | null {
    try {
      const oid = fs.readFileSync(this.refFile, "utf8").trim();
      return /^[0-9a-f]{40}$/u.test(oid) ? oid : null;
    } catch {
      return null;
    }
  }

  async readCommit(oid: string): Promise<HistoryCommit> {
    const git = await loadGit();
    const { commit } = await git.readCommit({ fs, gitdir: this.gitdir, oid });
    return {
      oid,
      parent: commit.parent[0] ?? null,
      author: commit.author.name === PEOPLE.hearth.name ? "hearth" : "owner",
      at: commit.author.timestamp * 1000,
      message: commit.message,
      tree: commit.tree,
    };
  }

  /**
   * The newest commit and its files. Read from `hearth-head.json` (written with each commit) when
   * it names the current head, so a batch with nothing to record never loads git.
   */
  async headFiles(): Promise<{ oid: string | null; files: Map<string, string> }> {
    const oid = this.head();
    if (!oid) return { oid, files: new Map() };
    try {
      const cached = JSON.parse(fs.readFileSync(this.headCache, "utf8")) as { commit?: unknown; files?: unknown };
      if (cached.commit === oid && cached.files && typeof cached.files === "object") {
        const files = new Map(Object.entries(cached.files as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === "string"));
        return { oid, files };
      }
    } catch {}
    return { oid, files: await this.files(oid) };
  }

  private get headCache(): string {
    return path.join(this.gitdir, "hearth-head.json");
  }

  /** Every file of a commit's tree: path → blob id. */
  async files(commitOid: string | null): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (!commitOid) return out;
    const git = await loadGit();
    const walk = async (treeOid: string, prefix: string) => {
      const { tree } = await git.readTree({ fs, gitdir: this.gitdir, oid: treeOid });
      for (const e of tree) {
        if (e.type === "tree") await walk(e.oid, `${prefix}${e.path}/`);
        else if (e.type === "blob") out.set(`${prefix}${e.path}`, e.oid);
      }
    };
    await walk((await this.readCommit(commitOid)).tree, "");
    return out;
  }

  async readBlob(oid: string): Promise<Buffer> {
    const git = await loadGit();
    return Buffer.from((await git.readBlob({ fs, gitdir: this.gitdir, oid })).blob);
  }

  async writeBlob(bytes: Uint8Array): Promise<string> {
    return this.writeObject("blob", bytes);
  }

  /** Stores one loose object (if it is not there yet) and returns its id. */
  private async writeObject(type: "blob" | "tree" | "commit", body: Uint8Array): Promise<string> {
    const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
    const oid = createHash("sha1").update(raw).digest("hex");
    const dir = path.join(this.gitdir, "objects", oid.slice(0, 2));
    const file = path.join(dir, oid.slice(2));
    let writing = this.writing.get(oid);
    if (!writing && !fs.existsSync(file)) {
      writing = this.writeLooseObject(dir, file, raw).finally(() => this.writing.delete(oid));
      this.writing.set(oid, writing);
    }
    await writing;
    return oid;
  }

  /** Deflated into a temp file, fsynced, renamed into place: a stop midway leaves no partial object under its name. */
  private async writeLooseObject(dir: string, file: string, raw: Buffer): Promise<void> {
    const deflated = await this.deflateInTurn(raw);
    if (!this.objectDirs.has(dir)) {
      await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
      this.objectDirs.add(dir);
      this.unsyncedDirs.add(path.dirname(dir));
    }
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      // Read-only from the start; a temp file a killed process of the same pid left is replaced.
      const handle = await fsp.open(tmp, "w", 0o400).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== "EACCES") throw err;
        await fsp.rm(tmp, { force: true });
        return fsp.open(tmp, "w", 0o400);
      });
      try {
        await handle.writeFile(deflated);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fsp.rename(tmp, file);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    this.unsyncedDirs.add(dir);
  }

  /** Deflates `raw` once fewer than DEFLATES_AT_ONCE others are running. */
  private async deflateInTurn(raw: Buffer): Promise<Buffer> {
    while (this.deflating >= DEFLATES_AT_ONCE) await new Promise<void>((resolve) => this.deflateQueue.push(resolve));
    this.deflating++;
    try {
      return await this.deflate(raw);
    } finally {
      this.deflating--;
      this.deflateQueue.shift()?.();
    }
  }

  /** Makes the renames of the objects written so far durable: done before any ref names them. */
  private async syncObjectDirs(): Promise<void> {
    const dirs = [...this.unsyncedDirs];
    this.unsyncedDirs.clear();
    await Promise.all(
      dirs.map(async (dir) => {
        try {
          const handle = await fsp.open(dir, fs.constants.O_RDONLY);
          try {
            await handle.sync();
          } finally {
            await handle.close();
          }
        } catch {
          // Not supported here; the renames themselves are still atomic.
        }
      }),
    );
  }

  /**
   * Commits `files` (the whole tree) on top of `parent` and moves `main` to it. Every object is
   * on disk (fsynced, its folder too) before the ref is replaced, atomically: a crash or a stop
   * at any point leaves the old or the new commit, never a broken ref or a head missing objects.
   */
  async commit(files: Map<string, string>, parent: string | null, author: Author, message: string, at: number): Promise<string> {
    const tree = await this.writeTreeOf(files);
    const when = `${Math.floor(at / 1000)} +0000`;
    const person = (who: Author) => `${PEOPLE[who].name} <${PEOPLE[who].email}> ${when}`;
    const text = `tree ${tree}\n${parent ? `parent ${parent}\n` : ""}author ${person(author)}\ncommitter ${person("hearth")}\n\n${message}`;
    const oid = await this.writeObject("commit", Buffer.from(text, "utf8"));
    await this.syncObjectDirs();
    fs.mkdirSync(path.dirname(this.refFile), { recursive: true, mode: 0o700 });
    writeFileAtomic(this.refFile, `${oid}\n`);
    writeFileAtomic(this.headCache, JSON.stringify({ commit: oid, files: Object.fromEntries(files) }));
    return oid;
  }

  /** A full commit id from a prefix of at least 4 hex digits (or HEAD); null when none or several match. */
  async resolve(rev: string): Promise<string | null> {
    if (rev === "HEAD") return this.head();
    if (!/^[0-9a-f]{4,40}$/u.test(rev)) return null;
    const git = await loadGit();
    try {
      const oid = await git.expandOid({ fs, gitdir: this.gitdir, oid: rev });
      await this.readCommit(oid);
      return oid;
    } catch {
      return null;
    }
  }

  private async writeTreeOf(files: Map<string, string>): Promise<string> {
    type Node = { blobs: Map<string, string>; dirs: Map<string, Node> };
    const root: Node = { blobs: new Map(), dirs: new Map() };
    for (const [p, oid] of files) {
      const parts = p.split("/");
      let node = root;
      for (const dir of parts.slice(0, -1)) {
        let next = node.dirs.get(dir);
        if (!next) node.dirs.set(dir, (next = { blobs: new Map(), dirs: new Map() }));
        node = next;
      }
      node.blobs.set(parts.at(-1)!, oid);
    }
    const write = async (node: Node): Promise<string> => {
      // git orders a tree's entries by name, a folder's name as if it ended in "/".
      const entries = [
        ...[...node.blobs].map(([name, oid]) => ({ key: name, mode: "100644", name, oid })),
        ...(await Promise.all([...node.dirs].map(async ([name, child]) => ({ key: `${name}/`, mode: "40000", name, oid: await write(child) })))),
      ].sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
      return this.writeObject("tree", Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, "hex")])));
    };
    return write(root);
  }
}
