// The media store (DESIGN §10): every attachment is kept once, in the folder of the scope that
// received it — `<workspace>/media/YYYY-MM/` for the main scope, `memory/chats/<slug>/media/`
// for a shared chat (so a shared scope's tools can reach its own files and nothing else) —
// named by date and a short content hash, so the same file sent twice is stored once.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MediaRef } from "../agent/messages.ts";
import { CHATS_DIR } from "../memory/visibility.ts";
import { writeFileAtomic } from "../state/storage.ts";
import { extensionOf, prepareAttachment } from "./prepare.ts";

/** Where a scope's media go, relative to the workspace. */
export function mediaDir(scope: { kind: "main" } | { kind: "shared"; chat: string }, at: number): string {
  if (scope.kind === "shared") return `${CHATS_DIR}/${scope.chat}/media`;
  const d = new Date(at);
  return `media/${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
}

export type StoreResult = { type: "stored"; ref: MediaRef } | { type: "refused"; reason: string };

/**
 * Checks the bytes (prepare.ts), writes them (and a derived copy: a scaled picture, a PDF's
 * text) under `dir`, durably, and returns the reference the transcript keeps. A file with the
 * same name and content hash is not written again.
 */
export async function storeMedia(workspace: string, dir: string, file: { bytes: Uint8Array; name: string; mime: string }, at: number): Promise<StoreResult> {
  const prepared = await prepareAttachment(file.bytes, file.name, file.mime);
  if (prepared.type === "refused") return prepared;
  const rel = storeBytes(workspace, dir, { ...file, mime: prepared.mime }, at);
  let modelFile = join(workspace, rel);
  if ("derived" in prepared && prepared.derived) {
    modelFile = `${modelFile}${prepared.derived.suffix}`;
    writeOnce(modelFile, prepared.derived.bytes);
  }
  const ref: MediaRef = {
    kind: prepared.type,
    path: rel,
    file: modelFile,
    mime: prepared.mime,
    name: file.name,
    ...("note" in prepared && prepared.note ? { note: prepared.note } : {}),
  };
  return { type: "stored", ref };
}

/** Writes the bytes as `<dir>/<date>-<hash><ext>` (once) and returns that path, relative to the workspace. */
export function storeBytes(workspace: string, dir: string, file: { bytes: Uint8Array; name: string; mime: string }, at: number): string {
  const hash = createHash("sha256").update(file.bytes).digest("hex").slice(0, 12);
  const rel = `${dir}/${new Date(at).toISOString().slice(0, 10)}-${hash}${safeExtension(file.name, file.mime)}`;
  writeOnce(join(workspace, rel), file.bytes);
  return rel;
}

export function writeOnce(path: string, bytes: Uint8Array): void {
  if (existsSync(path) && readFileSync(path).equals(bytes)) return;
  writeFileAtomic(path, bytes);
}

const MIME_EXT: Record<string, string> = { "image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp", "application/pdf": ".pdf" };

/** The sender's extension when it is plain letters and digits, else one from the MIME type. */
function safeExtension(name: string, mime: string): string {
  const ext = extensionOf(name);
  if (/^[a-z0-9]{1,8}$/.test(ext)) return `.${ext}`;
  return MIME_EXT[mime] ?? ".bin";
}
