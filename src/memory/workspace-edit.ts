// Editing a workspace note as a whole (the dashboard's Memory page): read it with a version,
// save new bytes only if the file is still that version. Both go through the workspace opener
// (workspace-open.ts) in the main scope, so the editor sees and writes exactly what the owner's
// runs may, never through a link, and a shared file with a second name is refused.
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, ftruncateSync, readFileSync, readdirSync, type Dirent, writeSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../process/log.ts";
import { isSharedVisible, openWorkspaceFile } from "./workspace-open.ts";
import { canSee, CHATS_DIR } from "./visibility.ts";
import { problemLogFor } from "./workspace-files.ts";

/** Largest note the editor opens or saves: a note this size is no longer edited by hand. */
export const MAX_EDIT_BYTES = 1_000_000;

/** Who sees a file, as the Memory page labels it. */
export type Audience = "main only" | "shared" | "this chat";

export type NoteRead =
  | { type: "ok"; text: string; version: string }
  /** `version` of a missing file: saving it creates the file. */
  | { type: "missing"; version: string }
  | { type: "refused"; reason: string };

export type NoteSave =
  /** `relPath` as the opener normalised it. */
  | { type: "saved"; version: string; relPath: string }
  /** The file changed since `version` was read; nothing was written. */
  | { type: "stale"; current: string; version: string }
  | { type: "refused"; reason: string };

const MAIN = { kind: "main" } as const;
/** The version of a file that does not exist. */
export const MISSING_VERSION = "missing";

export const versionOf = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex").slice(0, 32);

/** Who sees `relPath`: every scope (SOUL.md…), one chat (its folder), or only the owner. */
export function audienceOf(relPath: string): Audience {
  if (!isSharedVisible(relPath)) return "main only";
  return relPath.startsWith(`${CHATS_DIR}/`) ? "this chat" : "shared";
}

export function readNoteForEdit(workspace: string, relPath: string, log: Logger): NoteRead {
  const opened = openWorkspaceFile({ workspace, relPath, scope: MAIN, mode: "read" }, problemLogFor(log));
  if (opened.type === "missing") return { type: "missing", version: MISSING_VERSION };
  if (opened.type !== "ok") return { type: "refused", reason: opened.reason };
  try {
    if (opened.stat.size > MAX_EDIT_BYTES) return { type: "refused", reason: `larger than ${MAX_EDIT_BYTES} bytes` };
    const bytes = readFileSync(opened.fd);
    return { type: "ok", text: bytes.toString("utf8"), version: versionOf(bytes) };
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * Writes `text` as the whole of `relPath` if the file is still at `version` (MISSING_VERSION:
 * still absent). The check and the write happen on one descriptor; a program that writes the
 * file between them is not excluded (the file system has no compare-and-swap), but any change
 * made since the editor opened the file is.
 */
export function saveNote(workspace: string, relPath: string, text: string, version: string, log: Logger): NoteSave {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length > MAX_EDIT_BYTES) return { type: "refused", reason: `larger than ${MAX_EDIT_BYTES} bytes` };
  const opened = openWorkspaceFile({ workspace, relPath, scope: MAIN, mode: "replace" }, problemLogFor(log));
  if (opened.type !== "ok") return { type: "refused", reason: opened.type === "missing" ? "its folder cannot be created" : opened.reason };
  try {
    const before = opened.created ? null : readFileSync(opened.fd);
    const current = before === null ? MISSING_VERSION : versionOf(before);
    if (current !== version) return { type: "stale", current: before?.toString("utf8") ?? "", version: current };
    ftruncateSync(opened.fd, 0);
    let done = 0;
    while (done < bytes.length) done += writeSync(opened.fd, bytes, done, bytes.length - done, done);
    fsyncSync(opened.fd);
    return { type: "saved", version: versionOf(bytes), relPath: opened.relPath };
  } finally {
    closeSync(opened.fd);
  }
}

/** A workspace file the editor may open: its path and who sees it. */
export interface NoteEntry {
  relPath: string;
  audience: Audience;
}

/** Every note the owner's scope sees, sorted, at most `max`; folders that are links are not entered. */
export function listNotes(workspace: string, max = 2_000): NoteEntry[] {
  const out: NoteEntry[] = [];
  const walk = (rel: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(path.join(workspace, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= max || e.name.startsWith(".")) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(child);
      else if ((e.isFile() || e.isSymbolicLink()) && canSee(MAIN, child)) out.push({ relPath: child, audience: audienceOf(child) });
    }
  };
  walk("");
  // The workspace's own files first, then each folder's, folder by folder.
  const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
  return out.sort((a, b) => dirOf(a.relPath).localeCompare(dirOf(b.relPath)) || a.relPath.localeCompare(b.relPath));
}
