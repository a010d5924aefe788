// The scoped workspace context (DESIGN §4, §7): which files a run sees, in which order, within
// which caps. File contents are cached per path and kept fresh by invalidation (the watcher's
// events, the daemon's own writes), so a run normally assembles its context without touching
// the disk. The folder of old daily logs is never listed: the two log names are computed.
import path from "node:path";
import type { Logger } from "../process/log.ts";
import { localDate } from "../process/time.ts";
import { dailyLogRelPath, previousDate } from "./daily-log.ts";
import { canSee, IDENTITY_FILES, personNotePath, type MemoryScope } from "./visibility.ts";
import { cutText, problemLogFor, readWorkspaceFile, type ProblemLog, truncationMarker, type CappedRead, type Keep } from "./workspace-files.ts";

export interface ContextFile {
  /** Relative to the workspace, forward slashes. */
  relPath: string;
  /** The section heading: the path, plus "(today)" / "(yesterday)" for daily logs. */
  heading: string;
  /** Which end survives a cut: daily logs keep their newest part. */
  keep: Keep;
}

/**
 * The files of `scope`'s context on `date` (the owner's local date), in prompt order:
 * main → SOUL, IDENTITY, AGENTS, USER, MEMORY, yesterday's log, today's log;
 * shared → SOUL, IDENTITY, AGENTS, the notes about the member addressing Hearth (scope.person),
 * the chat's own log of today. HEARTBEAT.md is never part of it.
 */
export function contextFiles(scope: MemoryScope, date: string): ContextFile[] {
  const note = (relPath: string): ContextFile => ({ relPath, heading: relPath, keep: "head" });
  const log = (relPath: string, day: "today" | "yesterday"): ContextFile => ({ relPath, heading: `${relPath} (${day})`, keep: "tail" });
  const identity = IDENTITY_FILES.map(note);
  if (scope.kind === "shared") {
    const person = scope.person === undefined ? [] : [{ relPath: personNotePath(scope.chat, scope.person), heading: `${personNotePath(scope.chat, scope.person)} (your notes about the person writing to you now)`, keep: "head" as const }];
    return [...identity, ...person, log(dailyLogRelPath(scope, date), "today")];
  }
  return [
    ...identity,
    note("USER.md"),
    note("MEMORY.md"),
    log(dailyLogRelPath(scope, previousDate(date)), "yesterday"),
    log(dailyLogRelPath(scope, date), "today"),
  ];
}

export interface ContextCacheOptions {
  workspace: string;
  /** IANA zone of the owner: decides which daily logs are "today" and "yesterday". */
  timezone: string;
  log: Logger;
  /** Cap per file, in characters (default 20,000). */
  perFileChars?: number;
  /** Cap of the whole context, headings and markers included (default 60,000). */
  totalChars?: number;
}

interface Assembled {
  text: string;
  date: string;
  deps: readonly string[];
}

/** Assembled strings kept at most (one per scope and date; shared chats each have one). */
const MAX_ASSEMBLED = 256;
const DATED_LOG = /^memory\/(?:chats\/[^/]+\/)?(\d{4}-\d{2}-\d{2})\.md$/;

export class ContextCache {
  readonly #workspace: string;
  readonly #problems: ProblemLog;
  readonly #perFileChars: number;
  readonly #totalChars: number;
  readonly #timezone: string;
  readonly #files = new Map<string, CappedRead>();
  readonly #assembled = new Map<string, Assembled>();
  #lastDate = "";

  constructor(opts: ContextCacheOptions) {
    this.#workspace = opts.workspace;
    // Shared with every other user of this logger, so a bad file is logged once, not once per reader.
    this.#problems = problemLogFor(opts.log);
    this.#perFileChars = opts.perFileChars ?? 20_000;
    this.#totalChars = opts.totalChars ?? 60_000;
    this.#timezone = opts.timezone;
  }

  /** "2026-11-22": the owner's local date at `now`. */
  dateAt(now: number): string {
    return localDate(now, this.#timezone);
  }

  /**
   * The context of `scope` at `now`: one `## <path>` section per present, non-empty file, in
   * the order of `contextFiles`, within the per-file and total caps. "" when there is none.
   * A repeat call for the same scope and date returns the cached string without any fs call.
   */
  assemble(scope: MemoryScope, now: number): string {
    const date = this.dateAt(now);
    const key = `${scopeKey(scope)}|${date}`;
    const hit = this.#assembled.get(key);
    if (hit) return hit.text;
    if (date !== this.#lastDate) this.#forgetOldLogs(date);

    const files = contextFiles(scope, date);
    const sections: Section[] = [];
    let cacheable = true;
    for (const f of files) {
      // The privacy boundary (DESIGN §4): contextFiles must never name a file the scope may
      // not see. A failure here is a bug (or a forged chat slug), never something to skip.
      if (!canSee(scope, f.relPath)) {
        throw new Error(`context of ${scopeKey(scope)} would include ${f.relPath}, which that scope may not see; pass a scope made by memoryScopeFor()`);
      }
      const read = this.#read(f, scope);
      if (read.type === "unreadable") cacheable = false; // retry next time: the owner may fix it without an fs event
      if (read.type !== "ok") continue;
      const body = read.text.replace(/^\s*\n/, "").trimEnd();
      if (!body && !read.truncated) continue;
      sections.push({ heading: f.heading, body, keep: f.keep, omitted: read.omittedChars, estimated: read.estimated });
    }
    const text = fitToTotal(sections, this.#totalChars).map(renderSection).join("\n\n");
    if (cacheable) this.#remember(key, { text, date, deps: files.map((f) => f.relPath) });
    return text;
  }

  /** Drops the cached content of one file (and every assembled context that used it). */
  invalidate(relPath: string): void {
    const p = normalizeRel(relPath);
    this.#files.delete(p);
    for (const [key, a] of this.#assembled) if (a.deps.includes(p)) this.#assembled.delete(key);
  }

  invalidateAll(): void {
    this.#files.clear();
    this.#assembled.clear();
  }

  // One cache for all scopes is sound because what a file reads as does not depend on who asked:
  // a shared-visible file is opened under the same rules for every scope (workspace-open.ts),
  // and the others are only ever read for the main scope.
  #read(f: ContextFile, scope: MemoryScope): CappedRead {
    const cached = this.#files.get(f.relPath);
    if (cached) return cached;
    const read = readWorkspaceFile(this.#workspace, f.relPath, scope, { maxChars: this.#perFileChars, keep: f.keep }, this.#problems);
    if (read.type !== "unreadable") this.#files.set(f.relPath, read);
    return read;
  }

  #remember(key: string, a: Assembled): void {
    this.#assembled.set(key, a);
    if (this.#assembled.size > MAX_ASSEMBLED) this.#assembled.delete(this.#assembled.keys().next().value!);
  }

  /** A new day: logs older than yesterday can no longer be part of any context. */
  #forgetOldLogs(date: string): void {
    this.#lastDate = date;
    const yesterday = previousDate(date);
    for (const p of this.#files.keys()) {
      const d = DATED_LOG.exec(p)?.[1];
      if (d && d < yesterday) this.#files.delete(p);
    }
    for (const [key, a] of this.#assembled) if (a.date < yesterday) this.#assembled.delete(key);
  }
}

export const scopeKey = (scope: MemoryScope): string => (scope.kind === "main" ? "main" : `shared:${scope.chat}${scope.person === undefined ? "" : `:${scope.person}`}`);

/** "./memory//x.md" → "memory/x.md": the form cache keys and `canSee` use. */
export const normalizeRel = (relPath: string): string => path.posix.normalize(relPath.split(path.sep).join("/")).replace(/^\.\//, "");

interface Section {
  heading: string;
  body: string;
  keep: Keep;
  /** Characters of the file not in `body` (0: complete). */
  omitted: number;
  estimated: boolean;
}

function renderSection(s: Section): string {
  const head = `## ${s.heading}`;
  if (s.omitted === 0) return `${head}\n${s.body}`;
  const marker = truncationMarker(s.omitted, s.estimated);
  if (!s.body) return `${head}\n${marker}`;
  return s.keep === "tail" ? `${head}\n${marker}\n\n${s.body}` : `${head}\n${s.body}\n\n${marker}`;
}

/** Room a marker (and its blank line) may take, whatever the count in it. */
const MARKER_ROOM = truncationMarker(9_999_999_999, true).length + 2;

/**
 * Shrinks the largest sections first until the rendered whole fits `total` ("water filling"):
 * every file keeps a presence, small files stay whole, and each cut section says so.
 */
function fitToTotal(sections: Section[], total: number): Section[] {
  const frame = sections.reduce((n, s) => n + s.heading.length + 4, 0) + Math.max(0, sections.length - 1) * 2;
  const marked = new Set(sections.flatMap((s, i) => (s.omitted > 0 ? [i] : [])));
  for (;;) {
    const budget = Math.max(0, total - frame - marked.size * MARKER_ROOM);
    const level = waterLevel(sections.map((s) => s.body.length), budget);
    const cut = sections.flatMap((s, i) => (s.body.length > level ? [i] : []));
    if (cut.every((i) => marked.has(i))) {
      return sections.map((s, i) => {
        if (!cut.includes(i)) return s;
        const c = cutText(s.body, level, s.keep);
        return { ...s, body: c.text, omitted: s.omitted + c.omitted };
      });
    }
    for (const i of cut) marked.add(i);
  }
}

/** The largest cap c with Σ min(len, c) ≤ budget (Infinity when everything fits). */
function waterLevel(lengths: number[], budget: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let left = budget;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > share) return share;
    left -= sorted[i]!;
  }
  return Infinity;
}
