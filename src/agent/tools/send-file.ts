// `send_file`: a workspace file to the current chat, as a picture when it is one the platform
// shows as a photo, else as a document. Exactly once per reply: the gateway's outbox records
// what was sent.
//
// The outgoing-file rule, for send_file, markdown images in an answer and anything else that
// puts a workspace file into a chat: the file is opened once through the memory opener
// (workspace-open.ts, openOutgoingFile: inside the folder the scope may send from, no link at
// any level, one name), checked on that descriptor, and the bytes sent are the ones read from it.
import { closeSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { chatSlug, CHATS_DIR, memoryScopeFor } from "../../memory/visibility.ts";
import { NOT_VISIBLE, openOutgoingFile, OUTSIDE } from "../../memory/workspace-open.ts";
import { problemLogFor, type ProblemLog } from "../../memory/workspace-files.ts";
import type { Logger } from "../../process/log.ts";
import type { Scope } from "../messages.ts";
import { defineTool, type OutgoingFile, type ToolOutput } from "../tool.ts";

/** Telegram's photo limit (10 MB); larger pictures go as documents. */
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
/** Telegram's upload limit for bots (50 MB). */
const FILE_MAX_BYTES = 50 * 1024 * 1024;

const MIME: Record<string, string> = {
  jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp",
  pdf: "application/pdf", txt: "text/plain", md: "text/markdown", csv: "text/csv", json: "application/json",
};
const PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);

/** What a file is as it goes out, without its bytes. */
export type OutgoingInfo = Omit<OutgoingFile, "caption" | "data">;

/** How a file of `bytes` bytes at `file` goes out: its type, and whether as a photo. */
export function describeOutgoing(file: string, bytes: number): OutgoingInfo {
  const mime = MIME[path.extname(file).slice(1).toLowerCase()] ?? "application/octet-stream";
  return { file, name: path.basename(file), mime, asPhoto: PHOTO_TYPES.has(mime) && bytes <= PHOTO_MAX_BYTES };
}

/** `reason` is a sentence for the model (send_file's result) and the log (a markdown image kept as text). */
export type OutgoingCheck = { ok: true; relative: string; file: OutgoingInfo } | { ok: false; reason: string };
export type OutgoingRead = { ok: true; relative: string; file: Omit<OutgoingFile, "caption"> } | { ok: false; reason: string };

export interface OutgoingRequest {
  workspace: string;
  scope: Scope;
  sessionKey: string;
  /** As the model wrote it: relative to the workspace, or absolute inside it. */
  requested: string;
}

/** Whether `req` may be sent, by the outgoing-file rule; opens the file and closes it again. Never throws. */
export function checkOutgoing(req: OutgoingRequest, log: Logger | ProblemLog): OutgoingCheck {
  return withOutgoing(req, log, (_fd, info, relative) => ({ ok: true, relative, file: info }));
}

/** The file `req` names with its bytes, read from the descriptor the rule checked. Never throws. */
export function readOutgoing(req: OutgoingRequest, log: Logger | ProblemLog): OutgoingRead {
  return withOutgoing(req, log, (fd, info, relative, size) => {
    const data = Buffer.alloc(size);
    let got = 0;
    // A file that grows meanwhile is sent as it was when checked; one that shrinks, as far as it goes.
    while (got < size) {
      const n = readSync(fd, data, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return { ok: true, relative, file: { ...info, data: data.subarray(0, got) } };
  });
}

function withOutgoing<T extends { ok: true }>(req: OutgoingRequest, log: Logger | ProblemLog, use: (fd: number, info: OutgoingInfo, relative: string, size: number) => T): T | { ok: false; reason: string } {
  const shown = JSON.stringify(req.requested);
  if (req.requested.trim() === "" || req.requested.includes("\0")) return { ok: false, reason: "The path is empty or not a path; give a file path inside the workspace." };
  const rel = relativeToWorkspace(req.workspace, req.requested);
  const scope = memoryScopeFor(req.scope, req.sessionKey);
  const opened = rel === null ? ({ type: "refused", reason: OUTSIDE } as const) : openOutgoingFile({ workspace: req.workspace, relPath: rel, scope }, problemLogFor(log));
  switch (opened.type) {
    case "missing":
      return { ok: false, reason: `${shown} is not a file in the workspace.` };
    case "unreadable":
      return { ok: false, reason: `${shown} cannot be sent: ${opened.reason}.` };
    case "refused":
      if (opened.reason === NOT_VISIBLE) return { ok: false, reason: `Refused ${shown}: this conversation can only send files from ${CHATS_DIR}/${chatSlug(req.sessionKey)}/.` };
      if (opened.reason === OUTSIDE) return { ok: false, reason: `Refused ${shown}: it is outside the workspace. Only files inside the workspace can be sent to a chat.` };
      return { ok: false, reason: `Refused ${shown}: ${opened.reason}. Only a plain file (one name, not a link) can be sent to a chat.` };
    case "ok":
      break;
    default:
      return opened satisfies never;
  }
  try {
    const size = opened.stat.size;
    if (size > FILE_MAX_BYTES) return { ok: false, reason: `${shown} is ${size} bytes; the chat takes files up to ${FILE_MAX_BYTES}.` };
    return use(opened.fd, describeOutgoing(opened.absPath, size), opened.relPath, size);
  } catch (err) {
    return { ok: false, reason: `${shown} cannot be sent: read failed (${(err as NodeJS.ErrnoException).code ?? String(err)}).` };
  } finally {
    closeSync(opened.fd);
  }
}

/** `requested` relative to the workspace (an absolute path inside it is made relative), or null when it names a place outside. */
function relativeToWorkspace(workspace: string, requested: string): string | null {
  if (!path.isAbsolute(requested)) return requested;
  const roots = [path.resolve(workspace)];
  try {
    roots.push(realpathSync(workspace));
  } catch {
    // a missing workspace: the opener says so
  }
  for (const root of roots) {
    const rel = path.relative(root, requested);
    if (rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)) return rel.split(path.sep).join("/");
  }
  return null;
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
    const out = readOutgoing({ workspace: ctx.workspace, scope: ctx.scope, sessionKey: ctx.sessionKey, requested: input.path }, ctx.log);
    if (!out.ok) return { content: out.reason, isError: true };
    const sent = await ctx.sendFile({ ...out.file, ...(input.caption ? { caption: input.caption } : {}) });
    switch (sent.type) {
      case "sent":
        return { content: `Sent ${out.relative} to the chat as ${out.file.asPhoto ? "a photo" : "a document"}.` };
      case "already":
        return { content: `${out.relative} was already sent to the chat in this reply; not sent again.` };
      case "printed":
        return { content: `This chat cannot show files; tell the user the file is at ${out.file.file}.` };
      default:
        return sent.type satisfies never;
    }
  },
  precheck(input, ctx) {
    if (!ctx.sendFile) return null;
    const check = checkOutgoing({ workspace: ctx.workspace, scope: ctx.scope, sessionKey: ctx.sessionKey, requested: input.path }, ctx.log);
    return check.ok ? null : check.reason;
  },
  summarize: (input) => input.path,
});
