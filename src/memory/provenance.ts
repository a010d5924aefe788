// Which workspace files carry outside content: written by a run that had read some, downloaded or
// unpacked by a command of such a run, received as an attachment. A file's name says nothing
// about where its words came from, so the record says it: `<home>/provenance.jsonl`, one line
// per path (a folder covers what is under it), outside the workspace, where no command or tool
// reaches it. Reading a recorded file (read, memory_get, a memory_search hit, a command naming
// it) taints the run that reads it; a record that cannot be read taints every such read.
import { appendFileSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { writeFileAtomic } from "../state/storage.ts";
import { isContextPath } from "./context-paths.ts";

const entrySchema = z.object({ path: z.string(), why: z.string(), at: z.number() });
type Entry = z.infer<typeof entrySchema>;

/** What the files a command changed before the daemon stopped are recorded as: whether its run was tainted is not known. */
export const INTERRUPTED = "a file a command changed before Hearth stopped, in a run whose taint is not known";

/** What an attachment, and what is made of one (a transcript, a PDF's text), is recorded as. */
export const RECEIVED = "a file received as an attachment";

/** Lines kept at most: past it the record is compacted (gone files dropped, then files folded into their folders). */
export const MAX_ENTRIES = 2000;
/** Entries one command's changes are folded into at most. */
const MAX_PER_COMMAND = 100;
/** Workspace entries a scan after a command looks at; past it the whole workspace counts as changed. */
const MAX_SCAN = 50_000;
/** File times are taken from a coarse clock that may lag the daemon's by a tick. */
const CLOCK_SLACK_MS = 50;

export interface ProvenanceOptions {
  /** `<home>/provenance.jsonl`. */
  file: string;
  workspace: string;
  log: Logger;
  clock: () => number;
}

export class Provenance {
  readonly #o: ProvenanceOptions;
  #cache: { size: number; mtimeMs: number; entries: Map<string, string> | null } | null = null;
  /** The start times of the commands running now (`<file>.running`), so a crash leaves them to recover. */
  readonly #running = new Map<number, number>();
  #nextRun = 0;

  constructor(opts: ProvenanceOptions) {
    this.#o = opts;
  }

  /**
   * A command starts (its start time, the daemon's clock): kept in `<file>.running` until
   * `ended`, so what a command changed before a crash is recorded at the next start (`recover`).
   * Returns its id for `ended`. Never throws.
   */
  started(atMs: number): number {
    const id = this.#nextRun++;
    this.#running.set(id, atMs);
    this.#writeRunning();
    return id;
  }

  /** The command `id` ended; `why` when its run was tainted: what it changed is recorded. Never throws. */
  ended(id: number, why: string | null): void {
    const at = this.#running.get(id);
    if (at === undefined) return;
    if (why !== null) this.recordChangedSince(at, why);
    this.#running.delete(id);
    this.#writeRunning();
  }

  /** At start: what the commands a stopped daemon left running changed is recorded, since their runs' taint is not known. Never throws. */
  recover(): void {
    let text: string;
    try {
      text = readFileSync(`${this.#o.file}.running`, "utf8");
    } catch {
      return;
    }
    const times = text.split("\n").map(Number).filter((n) => Number.isFinite(n) && n > 0);
    // A file that does not read: scan from the oldest time it could name, the file's own birth.
    const since = times.length > 0 ? Math.min(...times) : 0;
    this.recordChangedSince(since, INTERRUPTED);
    this.#o.log.warn("provenance.recovered", { commands: times.length, since });
    this.#writeRunning();
  }

  #writeRunning(): void {
    const file = `${this.#o.file}.running`;
    try {
      if (this.#running.size === 0) rmSync(file, { force: true });
      else writeFileAtomic(file, [...this.#running.values()].map((t) => `${t}\n`).join(""));
    } catch (err) {
      this.#o.log.error("provenance.write_failed", { err, file });
    }
  }

  /**
   * Why the file at `relPath` (relative to the workspace) carries outside content, as a taint
   * clause ("a file written by a run that had read outside content (notes/page.md)"), or null.
   * Never throws.
   */
  taintOf(relPath: string): string | null {
    const rel = normal(relPath);
    if (rel === null) return null;
    const entries = this.#entries();
    if (entries === null) return `a file whose origin Hearth cannot tell: its record of files from outside could not be read (${rel})`;
    for (let p: string = rel; ; p = path.posix.dirname(p)) {
      const why = entries.get(p);
      if (why !== undefined) return `${why} (${rel})`;
      if (p === "." || p === "/") return null;
    }
  }

  /**
   * The first recorded file a command names, as a taint clause; null for none. A word of the
   * line names a file when it is its path from the workspace, ends with `/` and that path (an
   * absolute one), or is its name alone (`cd dl && cat page.html`); a URL names no file.
   */
  namedIn(command: string): string | null {
    const entries = this.#entries();
    if (entries === null) return `a command run where Hearth's record of files from outside could not be read`;
    const words = command
      .split(/[\s;|&<>()'"`=@,]+/)
      .filter((w) => w !== "" && !w.includes("://"))
      .map((w) => w.replace(/^(\.\/)+/, "").replace(/\/+$/, ""));
    for (const [p, why] of entries) {
      if (p === ".") return `${why} (the workspace)`;
      const name = path.posix.basename(p);
      if (words.some((w) => w === p || w.endsWith(`/${p}`) || w === name)) return `${why} (${p})`;
    }
    return null;
  }

  /** Records `relPaths` as carrying outside content, `why` in words for a question. Never throws. */
  record(relPaths: readonly string[], why: string): void {
    const at = this.#o.clock();
    const lines = relPaths.map(normal).filter((p): p is string => p !== null).map((p) => `${JSON.stringify({ path: p, why, at })}\n`);
    if (lines.length === 0) return;
    try {
      appendFileSync(this.#o.file, lines.join(""), { mode: 0o600 });
    } catch (err) {
      this.#o.log.error("provenance.write_failed", { err, count: lines.length });
      return;
    }
    const entries = this.#entries();
    if (entries !== null && entries.size > MAX_ENTRIES) this.#compact(entries);
  }

  /**
   * Records what changed in the workspace since `sinceMs` (a command's start): every file whose
   * status changed then (its ctime, which no program can set back) outside the context's notes
   * (read-only to commands, and written meanwhile by the daemon itself), folded into folders past MAX_PER_COMMAND. A workspace too large to scan counts as changed
   * as a whole. Synchronous; never throws.
   */
  recordChangedSince(sinceMs: number, why: string): void {
    const since = sinceMs - CLOCK_SLACK_MS;
    const changed: string[] = [];
    let seen = 0;
    const walk = (rel: string): boolean => {
      let names: string[];
      try {
        names = readdirSync(path.join(this.#o.workspace, rel));
      } catch {
        return true;
      }
      for (const name of names) {
        const child = rel === "" ? name : `${rel}/${name}`;
        if (isContextPath(child)) continue;
        if (++seen > MAX_SCAN) return false;
        let st;
        try {
          st = lstatSync(path.join(this.#o.workspace, child));
        } catch {
          continue;
        }
        if (st.ctimeMs >= since && !st.isDirectory()) changed.push(child);
        if (st.isDirectory() && !walk(child)) return false;
      }
      return true;
    };
    if (!walk("")) return this.record(["."], why);
    this.record(fold(changed, MAX_PER_COMMAND), why);
  }

  #entries(): Map<string, string> | null {
    let st;
    try {
      st = statSync(this.#o.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
      return null;
    }
    if (this.#cache && this.#cache.size === st.size && this.#cache.mtimeMs === st.mtimeMs) return this.#cache.entries;
    let entries: Map<string, string> | null = new Map();
    try {
      const lines = readFileSync(this.#o.file, "utf8").split("\n");
      for (const [i, line] of lines.entries()) {
        if (line.trim() === "") continue;
        let parsed: Entry | null = null;
        try {
          const r = entrySchema.safeParse(JSON.parse(line));
          if (r.success) parsed = r.data;
        } catch {
          parsed = null;
        }
        // A torn last line is an append cut short by a crash; anything else is damage: fail closed.
        if (parsed === null) {
          if (i === lines.length - 1) continue;
          entries = null;
          break;
        }
        entries.set(parsed.path, parsed.why);
      }
    } catch {
      entries = null;
    }
    if (entries === null) this.#o.log.error("provenance.unreadable", { file: this.#o.file });
    this.#cache = { size: st.size, mtimeMs: st.mtimeMs, entries };
    return entries;
  }

  /** Rewrites the record: paths that no longer exist dropped, then the rest folded until it fits. */
  #compact(entries: Map<string, string>): void {
    const live = [...entries].filter(([p]) => {
      try {
        lstatSync(path.join(this.#o.workspace, p));
        return true;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code !== "ENOENT";
      }
    });
    const why = new Map(live);
    const kept = fold(live.map(([p]) => p), MAX_ENTRIES / 2);
    const at = this.#o.clock();
    const text = kept.map((p) => `${JSON.stringify({ path: p, why: why.get(p) ?? [...why].find(([q]) => q.startsWith(`${p}/`))?.[1] ?? "a file that came from outside", at })}\n`).join("");
    try {
      writeFileAtomic(this.#o.file, text);
    } catch (err) {
      this.#o.log.error("provenance.write_failed", { err, count: kept.length });
    }
  }
}

/** `paths` folded into their folders, deepest first, until at most `max` remain ("." at worst). */
function fold(paths: readonly string[], max: number): string[] {
  let set = new Set(paths);
  while (set.size > max) {
    const depth = Math.max(...[...set].map((p) => (p === "." ? 0 : p.split("/").length)));
    if (depth <= 1) return ["."];
    set = new Set([...set].map((p) => (p !== "." && p.split("/").length === depth ? path.posix.dirname(p) : p)));
    // A folder covers what is under it.
    set = new Set([...set].filter((p) => ![...set].some((q) => q !== p && (q === "." || p.startsWith(`${q}/`)))));
  }
  return [...set];
}

/** A workspace-relative path with forward slashes and no `.`/`..` steps; null when it leaves the workspace. */
function normal(relPath: string): string | null {
  const p = path.posix.normalize(relPath.split(path.sep).join("/")).replace(/\/+$/, "");
  if (p === "" || p === ".") return ".";
  if (p === ".." || p.startsWith("../") || p.startsWith("/")) return null;
  return p.replace(/^\.\//, "");
}
