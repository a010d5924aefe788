// Watches the workspace's markdown files and media text (DESIGN §7; index-files.ts) so a hand edit takes effect on the next
// run without a restart, and tells the owner's edits apart from the daemon's own appends: only
// the former may start a new context epoch (and so bust the prompt cache of running sessions).
import { lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { Logger } from "../process/log.ts";
import { isIndexablePath } from "./search/index-files.ts";

export interface WorkspaceEvent {
  kind: "add" | "change" | "unlink";
  /** Relative to the workspace, forward slashes. */
  relPath: string;
  /** False only for the change the daemon announced with `expectOwnWrite`. */
  handEdit: boolean;
}

export interface WorkspaceWatcherOptions {
  workspace: string;
  log: Logger;
  /**
   * Called once per settled add/change/unlink of a markdown file or media text (an editor's save through a
   * temp file and a rename is one event). Must not block; a throw is logged and swallowed.
   */
  onEvent: (e: WorkspaceEvent) => void;
  /**
   * Called once when the workspace folder itself is deleted. The caller recreates it (from
   * the templates); the watcher notices on its own when the folder is back and reports the
   * files that appear in it. A throw is logged and swallowed.
   */
  onWorkspaceGone?: () => void;
}

const SETTLE = { stabilityThreshold: 200, pollInterval: 50 };
/**
 * An announced own write whose event has not arrived by then is forgotten. Timed on the
 * monotonic clock: a wall-clock step between the write and its event (NTP, a resumed laptop)
 * must not turn the daemon's own append into a hand edit.
 */
const OWN_WRITE_TTL_MS = 30_000;
/** Delay before checking whether a renamed markdown path became a directory. */
const REPLACED_CHECK_MS = 300;

interface OwnWrite {
  size: number;
  mtimeMs: number;
  /** performance.now() when it was announced. */
  at: number;
}

export class WorkspaceWatcher {
  readonly #root: string;
  readonly #log: Logger;
  readonly #onEvent: (e: WorkspaceEvent) => void;
  readonly #onGone: (() => void) | undefined;
  readonly #fsw: FSWatcher;
  readonly #ownWrites = new Map<string, OwnWrite>();
  /** Markdown names that are directories (already logged), so each is logged once. */
  readonly #mdDirs = new Set<string>();
  readonly #replacedChecks = new Map<string, NodeJS.Timeout>();
  readonly #errorsSeen = new Set<string>();
  #gone = false;
  #closed = false;

  /** Use `WorkspaceWatcher.start`. */
  private constructor(opts: WorkspaceWatcherOptions) {
    // The real folder: with followSymlinks off, a workspace reached through a symlink would
    // otherwise not be walked at all.
    this.#root = realOrResolved(opts.workspace);
    this.#log = opts.log;
    this.#onEvent = opts.onEvent;
    this.#onGone = opts.onWorkspaceGone;
    this.#fsw = watch(this.#root, {
      ignoreInitial: true,
      // A linked folder is never walked into (it may lead anywhere, or back to the root); a
      // symlink with a markdown name is reported like a file, so the cache drops what it held
      // for that name and the next read meets openWorkspaceFile's rules.
      followSymlinks: false,
      awaitWriteFinish: SETTLE,
      ignored: (p: string, stats?: Stats) => this.#isIgnored(p, stats),
    });
    this.#fsw.on("add", (p) => this.#onFile("add", p));
    this.#fsw.on("change", (p) => this.#onFile("change", p));
    this.#fsw.on("unlink", (p) => this.#onFile("unlink", p));
    this.#fsw.on("addDir", (p) => this.#onAddDir(p));
    this.#fsw.on("unlinkDir", (p) => this.#onUnlinkDir(p));
    this.#fsw.on("raw", (event, p, details) => this.#onRaw(event, p, details));
    this.#fsw.on("error", (err) => this.#onError(err));
  }

  /** Starts watching `workspace`; resolves once the initial scan is done. */
  static async start(opts: WorkspaceWatcherOptions): Promise<WorkspaceWatcher> {
    const w = WorkspaceWatcher.begin(opts);
    await w.ready;
    return w;
  }

  /**
   * Starts watching `workspace` and returns at once; `ready` resolves when the initial scan is
   * done (about a second per 10,000 files). Until then a change in a folder not yet scanned is
   * not reported: the memory service checks context files itself meanwhile, and its index
   * build makes a second pass once the scan is done.
   */
  static begin(opts: WorkspaceWatcherOptions): WorkspaceWatcher & { ready: Promise<void> } {
    const w = new WorkspaceWatcher(opts);
    const ready = new Promise<void>((resolve) => w.#fsw.once("ready", () => resolve()));
    return Object.assign(w, { ready });
  }

  /**
   * Call right after the daemon wrote `relPath` (an append). Until the expectation expires,
   * add/change events of that path report `handEdit: false` while the file still has the size
   * and modification time it has now — however many events one write produces. If the owner
   * changed it in between, the owner's edit wins and is reported as a hand edit.
   */
  expectOwnWrite(relPath: string): void {
    if (this.#closed) return;
    const rel = path.posix.normalize(relPath);
    const st = lstatSync(path.join(this.#root, rel), { throwIfNoEntry: false });
    if (st?.isFile()) this.#ownWrites.set(rel, { size: st.size, mtimeMs: st.mtimeMs, at: performance.now() });
    else this.#ownWrites.delete(rel);
  }

  /** Folders chokidar watches now (one inotify watch each on Linux). */
  watchedFolders(): number {
    return Object.keys(this.#fsw.getWatched()).length;
  }

  /** Stops watching and releases every handle and timer. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#replacedChecks.values()) clearTimeout(t);
    this.#replacedChecks.clear();
    this.#ownWrites.clear();
    await this.#fsw.close();
  }

  // chokidar calls this once without stats (the path alone decides, and a directory must not
  // be ignored then) and once with them. Ancestors of the root are never ignored: chokidar
  // watches through them to see a deleted workspace come back.
  #isIgnored(p: string, stats?: Stats): boolean {
    const rel = path.relative(this.#root, p);
    if (rel === "") return false;
    if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      return !(this.#root.startsWith(p.endsWith(path.sep) ? p : p + path.sep));
    }
    const parts = rel.split(path.sep);
    if (parts.some((s) => s.startsWith(".") || s === "node_modules")) return true;
    // Inside a shared chat's folder: one watch per chat would grow with the number of chats
    // (an inotify watch and its bookkeeping each). memory/chats/ itself is watched; the files
    // of each chat are checked by the memory service when that chat's context is read.
    if (parts.length > 3 && isInChatFolder(parts)) return true;
    if (parts.length === 3 && isInChatFolder(parts) && stats?.isDirectory()) return true;
    if (!stats || stats.isDirectory()) return false;
    return !((stats.isFile() || stats.isSymbolicLink()) && isIndexablePath(parts.join("/")));
  }

  #relative(abs: string): string | null {
    const rel = path.relative(this.#root, abs);
    if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
    return rel.split(path.sep).join("/");
  }

  #onFile(kind: WorkspaceEvent["kind"], abs: string): void {
    if (this.#closed) return;
    const relPath = this.#relative(abs);
    if (!relPath) return;
    if (kind !== "unlink") this.#mdDirs.delete(relPath); // a file again (chokidar may call that a change)
    const handEdit = kind === "unlink" ? (this.#ownWrites.delete(relPath), true) : !this.#takeOwnWrite(relPath, abs);
    this.#emit({ kind, relPath, handEdit });
  }

  #takeOwnWrite(relPath: string, abs: string): boolean {
    const own = this.#ownWrites.get(relPath);
    if (!own) return false;
    const st = lstatSync(abs, { throwIfNoEntry: false });
    const same = performance.now() - own.at <= OWN_WRITE_TTL_MS && st?.size === own.size && st.mtimeMs === own.mtimeMs;
    if (!same) this.#ownWrites.delete(relPath);
    return same;
  }

  #onAddDir(abs: string): void {
    const rel = this.#relative(abs);
    if (rel === "" && this.#gone) {
      this.#gone = false;
      this.#log.info("watcher.workspace_back", { path: this.#root });
    } else if (rel?.endsWith(".md")) {
      this.#noteMdDir(rel);
    }
  }

  #onUnlinkDir(abs: string): void {
    const rel = this.#relative(abs);
    if (rel === "") this.#noteGone();
    else if (rel?.endsWith(".md")) this.#mdDirs.delete(rel);
  }

  #noteGone(): void {
    if (this.#gone || this.#closed) return;
    this.#gone = true;
    this.#ownWrites.clear();
    this.#log.warn("watcher.workspace_deleted", { path: this.#root });
    try {
      this.#onGone?.();
    } catch (err) {
      this.#log.error("watcher.gone_handler_failed", { error: err });
    }
  }

  #noteMdDir(rel: string): boolean {
    if (this.#mdDirs.has(rel)) return false;
    this.#mdDirs.add(rel);
    this.#log.warn("watcher.directory_at_file_name", { path: rel, hint: "a directory has a markdown file's name; it is not read as that file until it is a file again" });
    return true;
  }

  // chokidar 6 reports nothing at all when a markdown file is replaced by a directory of the
  // same name within one burst (rm + mkdir). Its raw rename event is the only trace, so check
  // the path once things settled, and report the file as gone.
  #onRaw(event: string, p: unknown, details: unknown): void {
    if (this.#closed || event !== "rename" || typeof p !== "string" || !p.endsWith(".md")) return;
    const base = typeof details === "object" && details && "watchedPath" in details && typeof details.watchedPath === "string" ? details.watchedPath : this.#root;
    const abs = path.resolve(base, p);
    clearTimeout(this.#replacedChecks.get(abs));
    const timer = setTimeout(() => {
      this.#replacedChecks.delete(abs);
      const rel = this.#relative(abs);
      if (this.#closed || !rel || this.#isIgnored(abs)) return;
      const st = statSync(abs, { throwIfNoEntry: false });
      if (st?.isDirectory() && this.#noteMdDir(rel)) this.#emit({ kind: "unlink", relPath: rel, handEdit: true });
    }, REPLACED_CHECK_MS);
    timer.unref();
    this.#replacedChecks.set(abs, timer);
  }

  #onError(err: unknown): void {
    const e = err as NodeJS.ErrnoException;
    const key = `${e?.code ?? ""}:${e?.path ?? ""}:${e?.message ?? String(err)}`;
    if (this.#errorsSeen.has(key)) return;
    if (this.#errorsSeen.size >= 100) this.#errorsSeen.clear();
    this.#errorsSeen.add(key);
    this.#log.warn("watcher.error", { code: e?.code, path: e?.path, error: err });
  }

  #emit(e: WorkspaceEvent): void {
    try {
      this.#onEvent(e);
    } catch (err) {
      this.#log.error("watcher.handler_failed", { relPath: e.relPath, error: err });
    }
  }
}

/** `memory/chats/<chat>/…`: a path inside one shared chat's folder (the folder itself included). */
export function isInChatFolder(parts: readonly string[]): boolean {
  return parts.length >= 3 && parts[0] === "memory" && parts[1] === "chats";
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
