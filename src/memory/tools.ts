// The memory tools (DESIGN §7): memory_search, memory_get and memory_write. They are the only
// tools a shared scope has, so each one enforces the scope itself (visibility.ts): a group chat
// can read and search only the identity files and its own chat folder, and a refusal never
// tells it whether a private file exists.
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { defineTool, type Tool, type ToolContext, type ToolOutput } from "../agent/tool.ts";
import { readLineWindow } from "../agent/tools/files.ts";
import { resolveInWorkspace } from "../agent/tools/workspace-path.ts";
import { appendOnce, appendToDailyLog, dailyLogRelPath, localDate, localTime } from "./daily-log.ts";
import type { SearchIndex } from "./search-index.ts";
import { CHATS_DIR, canSee, IDENTITY_FILES, memoryScopeFor, type MemoryScope } from "./visibility.ts";

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
}

const DEFAULT_HITS = 8;
const MAX_HITS = 20;
const DEFAULT_GET_LINES = 60;
const MAX_GET_LINES = 400;
const MAX_NOTE_CHARS = 4000;
const MEMORY_FILE = "MEMORY.md";

export function createMemoryTools(deps: MemoryToolDeps): Tool[] {
  return [memorySearchTool(deps), memoryGetTool(deps), memoryWriteTool(deps)];
}

function memorySearchTool(deps: MemoryToolDeps): Tool {
  return defineTool({
    name: "memory_search",
    description: "Search your memory notes and daily logs by keywords; hits are file:line to open with memory_get.",
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
        hits = deps.index.search(input.query, scope, Math.min(MAX_HITS, input.limit ?? DEFAULT_HITS));
      } catch (err) {
        ctx.log.error("memory_search_failed", { err });
        return failure(`memory_search failed (${err instanceof Error ? err.message : String(err)}); try memory_get on a likely file instead.`);
      }
      if (hits.length === 0) return { content: "No matches." };
      return {
        content: hits.map((h) => `${h.path}:${h.line}${h.heading ? ` (${h.heading})` : ""} ${h.snippet}`).join("\n"),
      };
    },
    summarize: (input) => input.query,
  });
}

function memoryGetTool(deps: MemoryToolDeps): Tool {
  return defineTool({
    name: "memory_get",
    description: "Read numbered lines of a memory markdown file, e.g. around a memory_search hit.",
    input: z.object({
      path: z.string().describe("Path relative to the workspace, e.g. MEMORY.md"),
      from: z.number().min(1).optional().describe("First line, 1-based"),
      lines: z.number().min(1).optional().describe(`Max lines (default ${DEFAULT_GET_LINES}, up to ${MAX_GET_LINES})`),
    }),
    readOnly: true,
    async execute(input, ctx) {
      const scope = scopeOf(ctx);
      const where = await resolveVisible(deps.workspace, input.path, scope);
      if (!where.ok) return failure(where.reason);
      return readLineWindow(where.path, {
        shown: input.path,
        offset: input.from,
        limit: Math.min(MAX_GET_LINES, input.lines ?? DEFAULT_GET_LINES),
        offsetName: "from",
      });
    },
    summarize: (input) => input.path,
  });
}

function memoryWriteTool(deps: MemoryToolDeps): Tool {
  return defineTool({
    name: "memory_write",
    description: "Save a note to today's memory log, or with target memory a lasting fact to MEMORY.md.",
    input: z.object({
      text: z.string().describe("The note"),
      target: z.enum(["log", "memory"]).optional().describe('"log" (default): today\'s log; "memory": MEMORY.md'),
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
        return failure("Not available in this conversation: MEMORY.md is the owner's private memory. Save the note to this chat's log instead (target log).");
      }
      const named = target === "memory" ? MEMORY_FILE : dailyLogRelPath(scope, localDate(now, deps.timezone));
      // A shared chat's log must really be where its name says: a symlink or hard link in its folder
      // must not let a group append to another file. The owner's files may be links within the workspace.
      const where = await resolveInWorkspace(deps.workspace, named);
      const relPath = where.ok ? toPosix(where.relative) : named;
      const elsewhere = scope.kind !== "main" && (relPath !== named || (where.ok && linkCount(where.path) > 1));
      if (!where.ok || elsewhere) {
        return failure(`Could not save the note: ${named} is not a plain file inside the workspace (a link?). Ask the owner to fix it.`);
      }
      try {
        if (target === "memory") appendOnce(where.path, separatedFromEnd(where.path, bullet(text)));
        else appendToDailyLog(deps.workspace, scope, now, deps.timezone, separatedFromEnd(where.path, bullet(`${localTime(now, deps.timezone)} ${text}`)));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? String(err);
        return failure(`Could not save the note to ${named} (${code}).`);
      }
      deps.onOwnWrite(relPath);
      try {
        deps.index.refreshFile(deps.workspace, relPath);
      } catch (err) {
        ctx.log.warn("memory_index_update_failed", { path: relPath, err });
      }
      return { content: `Saved to ${relPath}.` };
    },
    summarize: (input) => input.target ?? "log",
  });
}

const scopeOf = (ctx: ToolContext): MemoryScope => memoryScopeFor(ctx.scope, ctx.sessionKey);

type Visible = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Where memory_get may read `requested`: the path as written and its real location after
 * symlinks must both be visible to `scope`. For a shared scope every refusal is one message,
 * whether the file exists or not.
 */
async function resolveVisible(workspace: string, requested: string, scope: MemoryScope): Promise<Visible> {
  const refuse = (mainReason: string): Visible => ({
    ok: false,
    reason: scope.kind === "main" ? mainReason : sharedRefusal(scope),
  });
  const mdOnly = `memory_get reads markdown (.md) files only; use read for ${JSON.stringify(requested)}.`;
  if (scope.kind !== "main" && path.isAbsolute(requested)) return refuse(mdOnly);
  const asWritten = toPosix(path.relative(path.resolve(workspace), path.resolve(workspace, requested)));
  // Checked before touching the disk, so a shared scope learns nothing from how resolving fails.
  if (scope.kind !== "main" && !canSee(scope, asWritten)) return refuse(mdOnly);
  const where = await resolveInWorkspace(workspace, requested);
  if (!where.ok) return refuse(where.reason);
  if (!canSee(scope, asWritten) || !canSee(scope, toPosix(where.relative))) return refuse(mdOnly);
  // A hard link in a chat folder may be a private file under a visible name; realpath cannot tell.
  if (scope.kind !== "main" && linkCount(where.path) > 1) return refuse(mdOnly);
  return { ok: true, path: where.path };
}

function sharedRefusal(scope: Extract<MemoryScope, { kind: "shared" }>): string {
  return `Not available in this conversation: memory_get can only read the shared files (${IDENTITY_FILES.join(", ")}) and this chat's own notes in ${CHATS_DIR}/${scope.chat}/.`;
}

function linkCount(file: string): number {
  try {
    return statSync(file).nlink;
  } catch {
    return 1; // missing: readLineWindow reports it
  }
}

/** `- text`, with continuation lines indented so a multi-line note stays one bullet. */
const bullet = (text: string): string => `- ${text.replace(/\r?\n/g, "\n  ")}\n`;

/** `entry`, preceded by a line end when the file exists and its last line has none (a hand edit). */
function separatedFromEnd(file: string, entry: string): string {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return entry;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return entry;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a ? entry : `\n${entry}`;
  } finally {
    closeSync(fd);
  }
}

const toPosix = (p: string): string => p.split(path.sep).join("/");
const failure = (content: string): ToolOutput => ({ content, isError: true });
