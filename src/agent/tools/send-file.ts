// `send_file`: a workspace file to the current chat, as a picture when it is one the platform
// shows as a photo, else as a document. The main scope may send any workspace file; a shared
// scope only files in its own chat folder (memory/chats/<slug>/), so a group can never be sent
// the owner's files. Exactly once per reply: the gateway's outbox records what was sent.
import { lstat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { chatSlug, CHATS_DIR } from "../../memory/visibility.ts";
import { defineTool, type ToolOutput } from "../tool.ts";
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
    if (ctx.scope === "shared") {
      const own = `${CHATS_DIR}/${chatSlug(ctx.sessionKey)}/`;
      if (!where.relative.split(path.sep).join("/").startsWith(own)) return { content: `Refused ${JSON.stringify(input.path)}: this conversation can only send files from ${own}.`, isError: true };
    }
    const st = await lstat(where.path).catch(() => undefined);
    if (!st?.isFile()) return { content: `${JSON.stringify(input.path)} is not a file in the workspace.`, isError: true };
    if (st.size > FILE_MAX_BYTES) return { content: `${JSON.stringify(input.path)} is ${st.size} bytes; the chat takes files up to ${FILE_MAX_BYTES}.`, isError: true };
    const ext = path.extname(where.path).slice(1).toLowerCase();
    const mime = MIME[ext] ?? "application/octet-stream";
    const asPhoto = PHOTO_TYPES.has(mime) && st.size <= PHOTO_MAX_BYTES;
    const name = path.basename(where.path);
    const sent = await ctx.sendFile({ file: where.path, name, mime, asPhoto, ...(input.caption ? { caption: input.caption } : {}) });
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
