// `send_file`: a workspace file to the current chat, as a picture when it is one the platform
// shows as a photo, else as a document. The main scope may send any workspace file; a shared
// scope only files in its own chat folder (memory/chats/<slug>/), so a group can never be sent
// the owner's files. Exactly once per reply: the gateway's outbox records what was sent.
import { realpathSync, statSync } from "node:fs";
import { lstat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { chatSlug, CHATS_DIR } from "../../memory/visibility.ts";
import type { Scope } from "../messages.ts";
import { defineTool, type OutgoingFile, type ToolOutput } from "../tool.ts";
import { resolveInWorkspace } from "./workspace-path.ts";

/** Telegram's photo limit (10 MB); larger pictures go as documents. */
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
/** Telegram's upload limit for bots (50 MB). */
const FILE_MAX_BYTES = 50 * 1024 * 1024;

const MIME: Record<string, string> = {
  jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp",
  pdf: "application/pdf", txt: "text/plain", md: "text/markdown", csv: "text/csv", json: "application/json",
};
const PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);

/** How a file of `bytes` bytes at `file` goes out: its type, and whether as a photo. */
export function describeOutgoing(file: string, bytes: number): Omit<OutgoingFile, "caption"> {
  const mime = MIME[path.extname(file).slice(1).toLowerCase()] ?? "application/octet-stream";
  return { file, name: path.basename(file), mime, asPhoto: PHOTO_TYPES.has(mime) && bytes <= PHOTO_MAX_BYTES };
}

/** The scope rule: main sends any workspace file, a shared scope only its own chat folder's. Null when allowed. */
export function scopeRefusal(scope: Scope, sessionKey: string, relative: string, shown: string): string | null {
  if (scope !== "shared") return null;
  const own = `${CHATS_DIR}/${chatSlug(sessionKey)}/`;
  return relative.split(path.sep).join("/").startsWith(own) ? null : `Refused ${JSON.stringify(shown)}: this conversation can only send files from ${own}.`;
}

export type OutgoingCheck = { ok: true; relative: string; file: Omit<OutgoingFile, "caption"> } | { ok: false; reason: string };

/**
 * The same checks as send_file, synchronously (a markdown image is checked while the answer
 * streams): `requested` names an existing file inside the workspace, after every symlink, that
 * the scope may send, within the upload limit. Never throws.
 */
export function checkOutgoingSync(workspace: string, scope: Scope, sessionKey: string, requested: string): OutgoingCheck {
  if (requested.trim() === "" || requested.includes("\0")) return { ok: false, reason: "not a file path" };
  let root: string;
  let real: string;
  try {
    root = realpathSync(path.resolve(workspace));
    real = realpathSync(path.resolve(root, requested));
  } catch {
    return { ok: false, reason: "no such file in the workspace" };
  }
  const relative = path.relative(root, real);
  if (relative === "" || relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return { ok: false, reason: "outside the workspace" };
  const refused = scopeRefusal(scope, sessionKey, relative, requested);
  if (refused) return { ok: false, reason: refused };
  const st = statSync(real, { throwIfNoEntry: false });
  if (!st?.isFile()) return { ok: false, reason: "not a file" };
  if (st.size > FILE_MAX_BYTES) return { ok: false, reason: `${st.size} bytes, over the upload limit` };
  return { ok: true, relative: relative.split(path.sep).join("/"), file: describeOutgoing(real, st.size) };
}

export const sendFileTool = defineTool({
  name: "send_file",
  description: "Send a workspace file to this chat (pictures as photos), with an optional caption.",
  input: z.object({
    path: z.string().min(1),
    caption: z.string().max(1024).optional(),
  }),
  readOnly: false,
  async execute(input, ctx): Promise<ToolOutput> {
    if (!ctx.sendFile) return { content: "There is no chat to send a file to in this run.", isError: true };
    const where = await resolveInWorkspace(ctx.workspace, input.path);
    if (!where.ok) return { content: where.reason, isError: true };
    const refused = scopeRefusal(ctx.scope, ctx.sessionKey, where.relative, input.path);
    if (refused) return { content: refused, isError: true };
    const st = await lstat(where.path).catch(() => undefined);
    if (!st?.isFile()) return { content: `${JSON.stringify(input.path)} is not a file in the workspace.`, isError: true };
    if (st.size > FILE_MAX_BYTES) return { content: `${JSON.stringify(input.path)} is ${st.size} bytes; the chat takes files up to ${FILE_MAX_BYTES}.`, isError: true };
    const out = describeOutgoing(where.path, st.size);
    const asPhoto = out.asPhoto;
    const sent = await ctx.sendFile({ ...out, ...(input.caption ? { caption: input.caption } : {}) });
    switch (sent.type) {
      case "sent":
        return { content: `Sent ${where.relative} to the chat as ${asPhoto ? "a photo" : "a document"}.` };
      case "already":
        return { content: `${where.relative} was already sent to the chat in this reply; not sent again.` };
      case "printed":
        return { content: `This chat cannot show files; tell the user the file is at ${where.path}.` };
      default:
        return sent.type satisfies never;
    }
  },
  summarize: (input) => input.path,
});
