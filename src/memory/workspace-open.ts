// The one way Hearth opens a workspace file for memory (DESIGN §4, §7): the context loader, the
// daily log, memory_get, memory_write and the search index all come through here, so the
// privacy wall does not depend on each of them remembering the rules.
//
// The rules, for a workspace-relative path and the scope whose run will see the bytes:
// 1. The scope must be allowed to see the path at all (visibility.ts), checked before any fs call.
// 2. Shared-visible files (SOUL.md, IDENTITY.md, AGENTS.md, everything in memory/chats/) must be
//    plain: a regular file with one name (no hard link), reached through real folders (no folder
//    link), opened without following a symlink. This holds for every scope, so a link planted by
//    any program cannot put USER.md, MEMORY.md or config.json under a name a group sees, and the
//    cached content of a shared file is the same whoever read it first.
// 3. The owner's own files (USER.md, MEMORY.md, main daily logs, other notes), read by the main
//    scope, may be symlinks to markdown files inside the workspace; never to a place outside it.
//    They may have a second name (a hard link): whoever can make one could read the file anyway,
//    and refusing it would let a planted link in a chat folder hide MEMORY.md from its owner.
//    The second name itself, if shared-visible, is refused by rule 2.
// 4. Hearth never writes through a link: appends go to a plain file with one name (rule 2), in
//    every scope.
//
// 5. A file that leaves the workspace for a chat (send_file, markdown images: openOutgoingFile)
//    must be plain in every scope, the owner's too: one name, no link at any level of its path,
//    inside the folder the scope may send from (visibility.ts, canSend). config.json and the
//    other files of the home live outside the workspace; a symlink to one is refused as a link,
//    a hard link to one as a second name, so no scope can send them. The caller sends the bytes
//    it reads from the descriptor this returns, never the path again.
//
// Races: folders are checked with lstat before the open, the final name is opened with
// O_NOFOLLOW, and the open file is checked afterwards (its kernel path via /proc/self/fd, or its
// dev/ino against the path) — a folder swapped for a link in between is caught after the open
// and before a byte is read or written.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import { descriptorIsAt } from "../agent/tools/workspace-path.ts";
import { canSee, canSend, CHATS_DIR, IDENTITY_FILES, type MemoryScope } from "./visibility.ts";
import type { ProblemLog } from "./problem-log.ts";

export type OpenMode = "read" | "append" | "replace";

export interface OpenRequest {
  /** The workspace folder (config `workspace`); it may itself be reached through a symlink. */
  workspace: string;
  /** Relative to the workspace, forward slashes, e.g. `memory/chats/telegram_-100/2026-11-23.md`. */
  relPath: string;
  /** The scope whose run sees (or writes) the bytes. */
  scope: MemoryScope;
  /**
   * "read": O_RDONLY. "append": O_RDWR | O_APPEND, creating the file (mode 0600) and its
   * folders (0700) when missing; reading is allowed so a caller can look at the last byte.
   * "replace": O_RDWR without O_APPEND, created like "append": the caller reads, then rewrites
   * the whole file through the descriptor (the dashboard's editor).
   */
  mode: OpenMode;
}

export type Opened =
  | {
      type: "ok";
      /** The open descriptor; the caller must close it. */
      fd: number;
      stat: Stats;
      /** The path that was opened, relative to the workspace: differs from the request only when the owner's file is a symlink. */
      relPath: string;
      absPath: string;
      /** True when "append" created the file. */
      created: boolean;
    }
  | { type: "missing" }
  /** A rule above said no. Link problems are logged once per path; a scope's reach beyond its files is not (it is the model asking). */
  | { type: "refused"; reason: string }
  /** Not a regular file, no permission, an I/O error: logged once per path. */
  | { type: "unreadable"; reason: string };

/** Refused for reason "not visible": the scope may not see the path (rule 1). */
export const NOT_VISIBLE = "not visible to this conversation";

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// O_NONBLOCK: opening a FIFO someone left at a workspace path must not hang the daemon.
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const READ_FLAGS = constants.O_RDONLY | NONBLOCK | NOFOLLOW;
const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND | NONBLOCK | NOFOLLOW;
const REPLACE_FLAGS = constants.O_RDWR | NONBLOCK | NOFOLLOW;

/** The workspace folder's real path, or why it cannot be opened. */
function workspaceRoot(workspace: string): string | Opened {
  try {
    return realpathSync(workspace);
  } catch (err) {
    const code = codeOf(err);
    return code === "ENOENT" ? { type: "missing" } : { type: "unreadable", reason: `the workspace folder is not accessible (${code})` };
  }
}

/**
 * Opens `req.relPath` under the rules above. Never throws for a bad file or a refusal; every
 * outcome is a value. The returned descriptor (type "ok") is the caller's to close.
 */
export function openWorkspaceFile(req: OpenRequest, problems: ProblemLog): Opened {
  const rel = normalizeRelPath(req.relPath);
  if (rel === null || !canSee(req.scope, rel)) return { type: "refused", reason: NOT_VISIBLE };
  const root = workspaceRoot(req.workspace);
  if (typeof root !== "string") return root;
  let target = rel;
  const ownersRead = req.mode === "read" && req.scope.kind === "main" && !isSharedVisible(rel);
  if (ownersRead) {
    const real = realRelPath(root, rel, problems);
    if (real.type !== "ok") return real;
    target = real.relPath;
  }
  return openPlain(root, target, req.mode, ownersRead && !isSharedVisible(target), problems);
}

/**
 * Opens `relPath` for sending into a chat of `scope` (rule 5): read-only, never through a link,
 * refused with more than one name. Refusals are values as in openWorkspaceFile; NOT_VISIBLE
 * when the scope may not send from there, OUTSIDE for a path that leaves the workspace.
 */
export function openOutgoingFile(req: Omit<OpenRequest, "mode">, problems: ProblemLog): Opened {
  const rel = normalizeRelPath(req.relPath);
  if (rel === null) return { type: "refused", reason: OUTSIDE };
  if (!canSend(req.scope, rel)) return { type: "refused", reason: NOT_VISIBLE };
  const root = workspaceRoot(req.workspace);
  if (typeof root !== "string") return root;
  return openPlain(root, rel, "read", false, problems);
}

/** Refused for reason "outside": the path leaves the workspace. */
export const OUTSIDE = "outside the workspace";

/** SOUL.md, IDENTITY.md, AGENTS.md and everything under memory/chats/: files some shared scope may see. */
export function isSharedVisible(relPath: string): boolean {
  return (IDENTITY_FILES as readonly string[]).includes(relPath) || relPath.startsWith(`${CHATS_DIR}/`);
}

/** "./memory//x.md" → "memory/x.md"; null for an empty, absolute or escaping path, or one with a NUL byte. */
export function normalizeRelPath(relPath: string): string | null {
  if (relPath === "" || relPath.includes("\0")) return null;
  const p = path.posix.normalize(relPath.split(path.sep).join("/")).replace(/^(\.\/)+/, "");
  if (p === "." || p === ".." || p.startsWith("../") || p.startsWith("/") || p.endsWith("/")) return null;
  return p;
}

/** Rule 3: where the owner's file really is, if that is a markdown file inside the workspace. */
function realRelPath(root: string, rel: string, problems: ProblemLog): { type: "ok"; relPath: string } | Exclude<Opened, { type: "ok" }> {
  const abs = path.join(root, rel);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT" || code === "ENOTDIR") return { type: "missing" };
    return refuse(problems, abs, code === "ELOOP" ? "a symlink loop" : `cannot resolve it (${code})`, "unreadable");
  }
  const relReal = path.relative(root, real).split(path.sep).join("/");
  if (relReal === ".." || relReal.startsWith("../") || path.isAbsolute(relReal)) {
    return refuse(problems, abs, "a link to a place outside the workspace");
  }
  if (!canSee({ kind: "main" }, relReal)) return refuse(problems, abs, "a link to a file that is not a markdown note");
  return { type: "ok", relPath: relReal };
}

/**
 * Rules 2 and 4: a regular file, through real folders, opened without following links, with
 * one name unless `manyNames` (rule 3).
 */
function openPlain(root: string, rel: string, mode: OpenMode, manyNames: boolean, problems: ProblemLog): Opened {
  const parts = rel.split("/");
  const abs = path.join(root, ...parts);
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    const folder = checkFolder(dir, mode);
    if (folder === "ok") continue;
    if (folder === "missing") return { type: "missing" };
    if (folder === "link") return refuse(problems, abs, `the folder ${path.relative(root, dir)} on its path is a link`);
    return refuse(problems, abs, folder.problem, "unreadable");
  }

  let fd: number;
  let created = false;
  try {
    if (mode !== "read") {
      const flags = mode === "append" ? APPEND_FLAGS : REPLACE_FLAGS;
      try {
        fd = openSync(abs, flags | constants.O_CREAT | constants.O_EXCL, 0o600);
        created = true;
      } catch (err) {
        if (codeOf(err) !== "EEXIST") throw err;
        fd = openSync(abs, flags);
      }
    } else {
      fd = openSync(abs, READ_FLAGS);
    }
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT" || code === "ENOTDIR") return { type: "missing" };
    // O_NOFOLLOW on a symlink: ELOOP on Linux, EMLINK on the BSDs.
    if (code === "ELOOP" || code === "EMLINK") return refuse(problems, abs, "a symlink");
    if (code === "EACCES" || code === "EPERM") return refuse(problems, abs, "permission denied", "unreadable");
    if (code === "ENXIO") return refuse(problems, abs, "not a regular file (socket or FIFO)", "unreadable");
    if (code === "EISDIR") return refuse(problems, abs, "not a regular file (directory)", "unreadable");
    return refuse(problems, abs, `cannot open (${code})`, "unreadable");
  }

  let problem: { reason: string; kind: "refused" | "unreadable" } | null = null;
  let stat: Stats | undefined;
  try {
    stat = fstatSync(fd);
    if (!stat.isFile()) problem = { reason: `not a regular file (${kindOf(stat)})`, kind: "unreadable" };
    else if (stat.nlink === 0) problem = { reason: "deleted while opening", kind: "unreadable" };
    else if (stat.nlink > 1 && !manyNames) problem = { reason: `a file with ${stat.nlink} names (hard links)`, kind: "refused" };
    else if (!descriptorIsAt(fd, abs, stat)) problem = { reason: "moved, or a folder on its path became a link, while it was opened", kind: "refused" };
  } catch (err) {
    problem = { reason: `cannot check it (${codeOf(err)})`, kind: "unreadable" };
  }
  if (problem || !stat) {
    closeSync(fd);
    return refuse(problems, abs, problem?.reason ?? "cannot check it", problem?.kind ?? "unreadable", stat?.mtimeMs);
  }
  return { type: "ok", fd, stat, relPath: rel, absPath: abs, created };
}

type FolderCheck = "ok" | "missing" | "link" | { problem: string };

/** A real folder (not a link); for a write, a missing one is created (0700) and checked again. */
function checkFolder(dir: string, mode: OpenMode): FolderCheck {
  const look = (): Stats | undefined => lstatSync(dir, { throwIfNoEntry: false });
  try {
    let st = look();
    if (!st) {
      if (mode === "read") return "missing";
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (err) {
        if (codeOf(err) !== "EEXIST") throw err;
      }
      st = look();
      if (!st) return "missing";
    }
    if (st.isSymbolicLink()) return "link";
    if (!st.isDirectory()) return mode === "read" ? "missing" : { problem: `${path.basename(dir)} on its path is not a folder` };
    return "ok";
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOTDIR") return mode === "read" ? "missing" : { problem: "a part of its path is not a folder" };
    return { problem: `cannot check a folder on its path (${code})` };
  }
}

function refuse(problems: ProblemLog, abs: string, reason: string, kind: "refused" | "unreadable" = "refused", mtimeMs?: number): { type: "refused" | "unreadable"; reason: string } {
  problems.warnOnce(abs, reason, mtimeMs ?? lmtimeOf(abs));
  return { type: kind, reason };
}

function lmtimeOf(abs: string): number | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false })?.mtimeMs;
  } catch {
    return undefined;
  }
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return "directory";
  if (st.isSocket()) return "socket";
  if (st.isFIFO()) return "FIFO";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
  return "special file";
}

function codeOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : String(err);
}
