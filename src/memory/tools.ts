// The memory tools (DESIGN §7): memory_search, memory_get and memory_write. They are the only
// tools a shared scope has, so each one enforces the scope itself (visibility.ts): a group chat
// can read and search only the identity files and its own chat folder, and a refusal never
// tells it whether a private file exists.
import { closeSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { defineTool, type Tool, type ToolContext, type ToolOutput } from "../agent/tool.ts";
import { decodeText, lineWindow, sizeProblem } from "../agent/tools/files.ts";
import type { Logger } from "../process/log.ts";
import { appendToDailyLog, appendToWorkspaceFile, dailyLogRelPath, localDate, localTime, WorkspaceWriteError } from "./daily-log.ts";
import type { SearchHit, SearchIndex } from "./search/search-index.ts";
import { CHATS_DIR, IDENTITY_FILES, isMediaText, memoryScopeFor, personNotePath, type MemoryScope } from "./visibility.ts";
import { problemLogFor, type ProblemLog } from "./workspace-files.ts";
import { normalizeRelPath, NOT_VISIBLE, openWorkspaceFile, type Opened } from "./workspace-open.ts";

export interface MemoryToolDeps {
  /** The workspace folder (config `workspace`). */
  workspace: string;
  /** The owner's IANA timezone: daily logs and note times are dated in it. */
  timezone: string;
  index: SearchIndex;
  /** Milliseconds since the epoch; tests pass a fixed clock. */
  clock: () => number;
  /**
   * Called after memory_write appended to `relPath` (workspace-relative, forward slashes), before
   * the tool returns, so the watcher can tell the daemon's own write from a hand edit (which
   * would restart context epochs). Must be quick and must not throw.
   */
  onOwnWrite: (relPath: string) => void;
  /** Where refused and unreadable files are logged (once per path); default: the run's logger. */
  log?: Logger;
  /** Keyword and vector search fused (hybrid.ts), when embeddings are configured; absent: keywords alone. */
  hybrid?: { search(query: string, scope: MemoryScope, limit: number): Promise<SearchHit[]> };
  /** Why a file carries outside content (provenance.ts Provenance.taintOf), or null; a run that reads one is tainted. Absent: nothing is. */
  origins?: { taintOf(relPath: string): string | null };
}

const DEFAULT_HITS = 8;
const MAX_HITS = 20;
const DEFAULT_GET_LINES = 60;
const MAX_GET_LINES = 400;
const MAX_NOTE_CHARS = 4000;
const MEMORY_FILE = "MEMORY.md";

export const INDEX_BUILDING_NOTE = "(The search index is still being built: these results may be incomplete; try again in a minute.)";

export function createMemoryTools(deps: MemoryToolDeps): Tool[] {
  return [memorySearchTool(deps), memoryGetTool(deps), memoryWriteTool(deps)];
}

function memorySearchTool(deps: MemoryToolDeps): Tool {
  return defineTool({
    name: "memory_search",
    description: "Search notes, daily logs and voice-note/document transcripts by keywords; hits are file:line for memory_get.",
    input: z.object({
      query: z.string().describe("Keywords"),
      limit: z.number().min(1).optional().describe(`Max hits (default ${DEFAULT_HITS})`),
    }),
    readOnly: true,
    async execute(input, ctx) {
      const scope = scopeOf(ctx);
      if (input.query.trim() === "") return failure("The query is empty; give a few keywords to look for.");
      let hits;
      try {
        const limit = Math.min(MAX_HITS, input.limit ?? DEFAULT_HITS);
        hits = deps.hybrid ? await deps.hybrid.search(input.query, scope, limit) : deps.index.search(input.query, scope, limit);
      } catch (err) {
        ctx.log.error("memory_search_failed", { err });
        return failure(`memory_search failed (${err instanceof Error ? err.message : String(err)}); try memory_get on a likely file instead.`);
      }
      // A first build runs in the background after start: say so, or "No matches" would be taken
      // for a fact about the notes.
      const building = deps.index.building ? `\n${INDEX_BUILDING_NOTE}` : "";
      if (hits.length === 0) return { content: `No matches.${building}` };
      const outside = deps.origins ? hits.map((h) => deps.origins!.taintOf(h.path)).find((w) => w !== null) : null;
      if (outside) ctx.tookIn?.(outside);
      return {
        content: hits.map((h) => `${h.path}:${h.line}${hitLabel(h)} ${h.snippet}`).join("\n") + building,
      };
    },
    summarize: (input) => input.query,
  });
}

function memoryGetTool(deps: MemoryToolDeps): Tool {
  return defineTool({
    name: "memory_get",
    description: "Read numbered lines of a memory note or transcript, e.g. around a memory_search hit.",
    input: z.object({
      path: z.string().describe("Path relative to the workspace, e.g. MEMORY.md"),
      from: z.number().min(1).optional().describe("First line, 1-based"),
      lines: z.number().min(1).optional().describe(`Max lines (default ${DEFAULT_GET_LINES}, up to ${MAX_GET_LINES})`),
    }),
    readOnly: true,
    async execute(input, ctx) {
      const scope = scopeOf(ctx);
      const opened = openVisible(deps.workspace, input.path, scope, problemLogFor(deps.log ?? ctx.log));
      if (opened.type !== "ok") return failure(opened.reason);
      const rel = relativeToWorkspace(deps.workspace, input.path);
      const outside = rel === null ? null : (deps.origins?.taintOf(rel) ?? null);
      if (outside) ctx.tookIn?.(outside);
      try {
        const tooLarge = sizeProblem(opened.stat.size, input.path);
        const loaded = tooLarge ?? decodeText(readAll(opened.fd, opened.stat.size), input.path);
        if (!loaded.ok) return loaded.output;
        return lineWindow(loaded.text, {
          shown: input.path,
          offset: input.from,
          limit: Math.min(MAX_GET_LINES, input.lines ?? DEFAULT_GET_LINES),
          offsetName: "from",
        });
      } catch (err) {
        return failure(`Could not read ${JSON.stringify(input.path)} (${(err as NodeJS.ErrnoException).code ?? String(err)}).`);
      } finally {
        closeSync(opened.fd);
      }
    },
    summarize: (input) => input.path,
  });
}

function memoryWriteTool(deps: MemoryToolDeps): Tool {
  return defineTool({
    name: "memory_write",
    description: "Save a note: to today's log, a lasting fact (target memory), or a fact about who is talking in a group (person).",
    input: z.object({
      text: z.string().describe("The note"),
      target: z
        .enum(["log", "memory", "person"])
        .optional()
        .describe('"log" (default): today\'s log; "memory": MEMORY.md; "person": notes on the sender, shown only when they write here'),
    }),
    readOnly: false,
    async execute(input, ctx) {
      const scope = scopeOf(ctx);
      const text = input.text.trim();
      if (text === "") return failure("The note is empty; give the text to save.");
      if (text.length > MAX_NOTE_CHARS) {
        return failure(`The note is ${text.length} characters; the limit is ${MAX_NOTE_CHARS}. Save a shorter summary.`);
      }
      const now = deps.clock();
      const target = input.target ?? "log";
      if (target === "memory" && scope.kind !== "main") {
        return failure("Not available in this conversation: MEMORY.md is the owner's private memory. Save the note to this chat's log instead (target log), or a fact about the person writing to you with target person.");
      }
      if (target === "person" && scope.kind === "main") {
        return failure("Target person is for notes about a member of a shared chat; in the owner's own conversation save lasting facts with target memory.");
      }
      if (target === "person" && scope.kind === "shared" && scope.person === undefined) {
        return failure("Not available in this run: it answers several people at once, so there is no one person to note this about. Save it to this chat's log instead (target log).");
      }
      // Opened by openWorkspaceFile: never through a symlink, a hard link or a linked folder.
      const problems = problemLogFor(deps.log ?? ctx.log);
      let relPath: string;
      let offset: number;
      try {
        ({ relPath, offset } =
          target === "log"
            ? appendToDailyLog(deps.workspace, scope, now, deps.timezone, bullet(`${localTime(now, deps.timezone)} ${text}`), problems, { separate: true })
            : appendToWorkspaceFile(deps.workspace, noteFile(target, scope), scope, bullet(text), { separate: true }, problems));
      } catch (err) {
        if (!(err instanceof WorkspaceWriteError)) throw err;
        const named = target === "log" ? dailyLogRelPath(scope, localDate(now, deps.timezone)) : noteFile(target, scope);
        return failure(`Could not save the note to ${named} (${err.reason}). Hearth writes only to plain files inside the workspace (no symlink, no hard link, no linked folder); ask the owner to fix it.`);
      }
      deps.onOwnWrite(relPath);
      try {
        deps.index.appendToFile(deps.workspace, relPath, offset);
      } catch (err) {
        ctx.log.warn("memory_index_update_failed", { path: relPath, err });
      }
      return { content: `Saved to ${relPath}.` };
    },
    summarize: (input) => input.target ?? "log",
  });
}

/** What a hit is: its heading in a note, or for media text what it was received as and the stored file. */
function hitLabel(h: SearchHit): string {
  if (isMediaText(h.path)) return ` (${describeMediaText(h.path)})`;
  return h.heading ? ` (${h.heading})` : "";
}

/**
 * Media text as the media store names it: `<stored>.pdf.txt` is a PDF's extracted text,
 * `<stored>.<ext>.txt` a voice note's (or audio file's) transcript, and a stored name with no
 * second extension (`<date>-<hash>.txt`, `.md`) a text file as it was received.
 */
export function describeMediaText(relPath: string): string {
  if (relPath.endsWith(".md")) return "a text file received in a chat";
  const stored = relPath.slice(0, -".txt".length);
  const ext = path.posix.extname(path.posix.basename(stored)).toLowerCase();
  if (ext === "") return "a text file received in a chat";
  if (ext === ".pdf") return `text of the PDF ${stored}`;
  return `transcript of the voice note ${stored}`;
}

/** MEMORY.md, or the notes about the member addressing Hearth in a shared chat. */
const noteFile = (target: "memory" | "person", scope: MemoryScope): string =>
  target === "person" && scope.kind === "shared" && scope.person !== undefined ? personNotePath(scope.chat, scope.person) : MEMORY_FILE;

const scopeOf = (ctx: ToolContext): MemoryScope => memoryScopeFor(ctx.scope, ctx.chatKey ?? ctx.sessionKey, ctx.person);

/**
 * Opens what memory_get may read at `requested` (relative to the workspace; the main scope may
 * also name it absolutely) through openWorkspaceFile. For a shared scope every refusal is one
 * message, whether the file exists or not, and nothing is looked up on disk for a path it may
 * not see.
 */
function openVisible(workspace: string, requested: string, scope: MemoryScope, problems: ProblemLog): Extract<Opened, { type: "ok" }> | { type: "failed"; reason: string } {
  const shown = JSON.stringify(requested);
  const mdOnly = `memory_get reads markdown (.md) notes inside the workspace only; use read for ${shown}.`;
  const refuse = (mainReason: string) => ({ type: "failed" as const, reason: scope.kind === "main" ? mainReason : sharedRefusal(scope) });
  if (scope.kind !== "main" && path.isAbsolute(requested)) return refuse(mdOnly);
  const rel = relativeToWorkspace(workspace, requested);
  if (rel === null) return refuse(`Refused ${shown}: it is outside the workspace. memory_get reads notes inside the workspace; use a path relative to it.`);
  const opened = openWorkspaceFile({ workspace, relPath: rel, scope, mode: "read" }, problems);
  switch (opened.type) {
    case "ok":
      return opened;
    case "missing":
      return { type: "failed", reason: `File not found: ${shown}.` };
    case "refused":
      return refuse(opened.reason === NOT_VISIBLE ? mdOnly : `Refused ${shown} (${opened.reason}). memory_get reads only plain markdown files inside the workspace; a note the chats see must not be a link.`);
    case "unreadable":
      return refuse(`Could not read ${shown}: ${opened.reason}.`);
  }
}

/** `requested` as a normalised workspace-relative path, or null when it is not inside. */
function relativeToWorkspace(workspace: string, requested: string): string | null {
  if (!path.isAbsolute(requested)) return normalizeRelPath(requested);
  for (const root of [path.resolve(workspace), realOrSelf(workspace)]) {
    const rel = normalizeRelPath(path.relative(root, requested));
    if (rel !== null) return rel;
  }
  return null;
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function sharedRefusal(scope: Extract<MemoryScope, { kind: "shared" }>): string {
  return `Not available in this conversation: memory_get can only read the shared files (${IDENTITY_FILES.join(", ")}) and this chat's own notes in ${CHATS_DIR}/${scope.chat}/.`;
}

function readAll(fd: number, size: number): Buffer {
  const buf = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    const n = readSync(fd, buf, got, size - got, got);
    if (n === 0) break; // the file shrank while we read it
    got += n;
  }
  return buf.subarray(0, got);
}

/** `- text`, with continuation lines indented so a multi-line note stays one bullet. */
const bullet = (text: string): string => `- ${text.replace(/\r?\n/g, "\n  ")}\n`;

const failure = (content: string): ToolOutput => ({ content, isError: true });
