// The file tools `read`, `write` and `edit`. Every path goes through resolveInWorkspace before
// any fs access, and writes are atomic (temp file + rename) so a reader never sees half a file.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { chmod, type FileHandle, lstat, mkdir, open, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool, type ToolContext, type ToolOutput } from "../tool.ts";
import { descriptorIsAt, resolveInWorkspace } from "./workspace-path.ts";
import { CONTEXT_DIRS, CONTEXT_FILES, isContextPath } from "../../memory/context-paths.ts";

export const DEFAULT_READ_LINES = 2000;
export const MAX_LINE_CHARS = 2000;
/** Larger files are whole-file-loaded by neither tool; exec with sed/grep/head is the way in. */
export const MAX_TEXT_FILE_BYTES = 10 * 1024 * 1024;

const pathField = z.string().describe("Path relative to the workspace");

/** What the file tools know of where files came from (memory/provenance.ts); absent: nothing is recorded or checked. */
export interface FileOrigins {
  /** Why the file at `relPath` carries outside content, or null. Must not throw. */
  taintOf(relPath: string): string | null;
  /** Records files as carrying outside content. Must not throw. */
  record(relPaths: readonly string[], why: string): void;
}

/** What a file a tainted run wrote is recorded as. */
export const WRITTEN_TAINTED = "a file written by a run that had read outside content";

export interface ReadToolOptions {
  origins?: FileOrigins;
  /**
   * When given, a shared-scope call may only open files inside these real absolute folders
   * (the shared skills' folders). Called per call; returns [] when there are none.
   */
  sharedRoots?: () => readonly string[];
}

export const createReadTool = (opts: ReadToolOptions = {}) => defineTool({
  name: "read",
  description: `Read a text file from the workspace, with line numbers. Returns up to ${DEFAULT_READ_LINES} lines; use offset and limit for other parts of long files.`,
  input: z.object({
    path: pathField,
    // Plain numbers: .int() would add a 2^53 maximum to the schema sent with every request.
    offset: z.number().min(1).optional().describe("First line, 1-based"),
    limit: z.number().min(1).optional().describe(`Max lines (default ${DEFAULT_READ_LINES})`),
  }),
  readOnly: true,
  async execute(input, ctx) {
    const where = await resolveInWorkspace(ctx.workspace, input.path);
    if (!where.ok) return failure(where.reason);
    // The owner's own attachments (media/YYYY-MM/) stay private even where read is allowed to all.
    if (ctx.scope === "shared" && (where.relative === "media" || where.relative.startsWith(`media${path.sep}`))) {
      return failure(`Refused ${quote(input.path)}: media/ holds the owner's private files, which this conversation cannot open.`);
    }
    if (ctx.scope === "shared" && opts.sharedRoots) {
      if (!opts.sharedRoots().some((root) => isWithin(root, where.path))) {
        return failure(`Refused ${quote(input.path)}: in this conversation read only opens the folders of shared skills.`);
      }
      // A second name (hard link) of a private file inside a shared skill must not carry it out.
      const st = await lstat(where.path).catch(() => undefined);
      if (st?.isFile() && st.nlink > 1) return failure(`Refused ${quote(input.path)}: it is a hard link (a second name of another file); shared skills must hold plain files.`);
    }
    // Words from outside taint the run that reads them, whatever the file is called now.
    const outside = opts.origins?.taintOf(where.relative);
    if (outside) ctx.tookIn?.(outside);
    if (ctx.scope === "main" && IMAGE_FILE.test(input.path)) return readImage(where.path, input.path);
    return readLineWindow(where.path, { shown: input.path, offset: input.offset, limit: input.limit ?? DEFAULT_READ_LINES });
  },
  summarize: (input) => input.path,
});

const IMAGE_FILE = /\.(jpe?g|png|gif|webp|heic|heif|tiff?|bmp)$/i;
const MAX_IMAGE_FILE_BYTES = 20 * 1024 * 1024;

/** A picture in the workspace as an image block (scaled or converted to what the API takes). */
async function readImage(file: string, shown: string): Promise<ToolOutput> {
  let handle: FileHandle;
  try {
    handle = await open(file, READ_NOFOLLOW);
  } catch (err) {
    return failure(describeFsError(err, shown, "read"));
  }
  let bytes: Uint8Array;
  try {
    const info = await handle.stat();
    if (!info.isFile() || !descriptorIsAt(handle.fd, file, info)) return failure(`${quote(shown)} is not a regular file.`);
    if (info.size > MAX_IMAGE_FILE_BYTES) return failure(`${quote(shown)} is ${info.size} bytes, too large a picture to show (limit ${MAX_IMAGE_FILE_BYTES}).`);
    bytes = await handle.readFile();
  } catch (err) {
    return failure(describeFsError(err, shown, "read"));
  } finally {
    await handle.close();
  }
  const { imageForModel } = await import("../../media/prepare.ts");
  const image = await imageForModel(bytes, shown);
  if (image.type === "refused") return failure(image.reason);
  return { content: `The picture ${shown}${image.note ? ` ${image.note}` : ""}:`, images: [{ type: "image", mediaType: image.mime, data: Buffer.from(image.bytes).toString("base64") }] };
}

export const readTool = createReadTool();

const isWithin = (root: string, p: string): boolean => {
  const rel = path.relative(root, p);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
};

export const createWriteTool = (opts: { origins?: FileOrigins } = {}) => defineTool({
  name: "write",
  description:
    "Create or overwrite a file in the workspace with the given content, creating folders as needed. To change part of an existing file, prefer edit.",
  input: z.object({
    path: pathField,
    content: z.string().describe("The complete file content"),
  }),
  readOnly: false,
  async execute(input, ctx) {
    const where = await resolveInWorkspace(ctx.workspace, input.path);
    if (!where.ok) return failure(where.reason);
    const laundering = contextRefusal(ctx, input.path, where.relative);
    if (laundering) return failure(laundering);
    const existing = await stat(where.path).catch(() => undefined);
    if (existing?.isDirectory()) return failure(`${quote(input.path)} is a directory; give a file path.`);
    try {
      await mkdir(path.dirname(where.path), { recursive: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST" || code === "ENOTDIR") return failure(`A parent of ${quote(input.path)} is a file, not a folder.`);
      return failure(describeFsError(err, input.path, "write"));
    }
    recordIfTainted(ctx, opts.origins, where.relative);
    try {
      await writeFileAtomic(where.path, input.content);
    } catch (err) {
      return failure(describeFsError(err, input.path, "write"));
    }
    const bytes = Buffer.byteLength(input.content);
    return { content: `${existing ? "Replaced" : "Created"} ${where.relative} (${bytes} bytes written).` };
  },
  summarize: (input) => input.path,
});

export const createEditTool = (opts: { origins?: FileOrigins } = {}) => defineTool({
  name: "edit",
  description:
    "Replace exact text in a workspace file. old_text must match the file exactly, whitespace included, and occur once unless replace_all is set.",
  input: z.object({
    path: pathField,
    old_text: z.string().describe("Exact text to replace"),
    new_text: z.string().describe("Replacement text"),
    replace_all: z.boolean().optional().describe("Replace every occurrence"),
  }),
  readOnly: false,
  async execute(input, ctx) {
    if (input.old_text === "") return failure("old_text is empty; give the exact text to replace (use write to create a file).");
    if (input.old_text === input.new_text) return failure("old_text and new_text are the same; nothing would change.");
    const where = await resolveInWorkspace(ctx.workspace, input.path);
    if (!where.ok) return failure(where.reason);
    const laundering = contextRefusal(ctx, input.path, where.relative);
    if (laundering) return failure(laundering);
    const loaded = await loadTextFile(where.path, input.path);
    if (!loaded.ok) return loaded.output;
    const text = loaded.text;

    let oldText = input.old_text;
    let newText = input.new_text;
    let count = countOccurrences(text, oldText);
    if (count === 0 && text.includes("\r\n") && oldText.includes("\n")) {
      // The file has CRLF line ends; text copied from `read` output has none.
      oldText = toCrlf(oldText);
      newText = toCrlf(newText);
      count = countOccurrences(text, oldText);
    }
    if (count === 0) {
      const squashed = squashWhitespace(input.old_text);
      const nearMiss = squashed !== "" && squashWhitespace(text).includes(squashed)
        ? " It does occur if whitespace is ignored: copy indentation, tabs and line breaks exactly."
        : " Read the file again to see its current text.";
      return failure(`old_text was not found in ${quote(input.path)}.${nearMiss}`);
    }
    if (count > 1 && !input.replace_all) {
      return failure(
        `old_text occurs ${count} times in ${quote(input.path)}. Add surrounding lines to make it unique, or set replace_all to replace every occurrence.`,
      );
    }

    const updated = input.replace_all
      ? text.split(oldText).join(newText)
      : text.replace(oldText, () => newText);
    recordIfTainted(ctx, opts.origins, where.relative);
    try {
      await writeFileAtomic(where.path, updated);
    } catch (err) {
      return failure(describeFsError(err, input.path, "write"));
    }
    return { content: `Edited ${where.relative}: ${count} replacement${count === 1 ? "" : "s"}.` };
  },
  summarize: (input) => input.path,
});

export const writeTool = createWriteTool();
export const editTool = createEditTool();

/** A tainted run's write is recorded before it is made: a crash between the two leaves the file counted as outside. */
function recordIfTainted(ctx: ToolContext, origins: FileOrigins | undefined, relative: string): void {
  if (origins && ctx.taintedBy?.()) origins.record([relative], WRITTEN_TAINTED);
}

/**
 * Why a write to `requested` (real path `relative`) is refused: a run that read outside content
 * changing a note that enters every later context (memory/context-paths.ts) would launder its
 * taint, as the name asked or as the file really is (a link to USER.md is USER.md). Null: go on.
 */
function contextRefusal(ctx: ToolContext, requested: string, relative: string): string | null {
  const lexical = path.relative(path.resolve(ctx.workspace), path.resolve(ctx.workspace, requested));
  if (!isContextPath(lexical) && !isContextPath(relative)) return null;
  const tainted = ctx.taintedBy?.() ?? null;
  if (tainted === null) return null;
  return `Refused ${quote(requested)}: ${tainted}, and a conversation that read outside content cannot change the notes that enter every conversation's context (${[...CONTEXT_FILES, ...CONTEXT_DIRS.map((d) => `${d}/`)].join(", ")}). Tell the owner what you would change; they can edit the file themselves, or ask again after /new.`;
}

export interface LineWindowOptions {
  /** The path as the caller named it, for messages. */
  shown: string;
  /** First line, 1-based (default 1). */
  offset?: number;
  /** Max lines (default DEFAULT_READ_LINES). */
  limit?: number;
  /** The input field that selects the first line, named in hints (default "offset"). */
  offsetName?: string;
}

/**
 * The numbered line window of a UTF-8 text file as the read tool shows it (`     12\tline`, long
 * lines cut, a note when lines remain), or an `isError` output that says why not. `file` must
 * already be confined (resolveInWorkspace); this only reads. Never throws.
 */
export async function readLineWindow(file: string, opts: LineWindowOptions): Promise<ToolOutput> {
  const loaded = await loadTextFile(file, opts.shown);
  if (!loaded.ok) return loaded.output;
  return lineWindow(loaded.text, opts);
}

/** The numbered line window of `text` (see readLineWindow), for callers that read the file themselves. */
export function lineWindow(text: string, opts: LineWindowOptions): ToolOutput {
  const { shown } = opts;
  const offsetName = opts.offsetName ?? "offset";
  const lines = splitLines(text);
  if (lines.length === 0) return { content: `${quote(shown)} is empty.` };
  const first = Math.floor(opts.offset ?? 1);
  if (first > lines.length) {
    return failure(`${offsetName} ${first} is past the end: ${quote(shown)} has ${lines.length} lines.`);
  }
  const last = Math.min(lines.length, first - 1 + Math.floor(opts.limit ?? DEFAULT_READ_LINES));
  const body = lines
    .slice(first - 1, last)
    .map((line, i) => `${String(first + i).padStart(6)}\t${cutLine(line)}`)
    .join("\n");
  const more = last < lines.length ? `\n[lines ${first}-${last} of ${lines.length}; use ${offsetName} to read more]` : "";
  return { content: body + more };
}

export type Loaded = { ok: true; text: string } | { ok: false; output: ToolOutput };

/**
 * Loads a whole file as UTF-8 text, or explains why it is not one. `file` is a real path
 * (resolveInWorkspace): it is opened without following a symlink and checked to be that file
 * once open, so a link swapped in after resolving cannot lead the read out of the workspace.
 */
async function loadTextFile(file: string, shown: string): Promise<Loaded> {
  const fail = (reason: string): Loaded => ({ ok: false, output: failure(reason) });
  const swapped = () => fail(`Refused ${quote(shown)}: it changed into a link while it was being opened. Try again once it is a plain file.`);
  let handle: FileHandle;
  try {
    handle = await open(file, READ_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "EMLINK") return swapped();
    if (code === "ENXIO") return fail(`${quote(shown)} is not a regular file.`);
    return fail(describeFsError(err, shown, "read"));
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return fail(`${quote(shown)} is a directory, not a file; use exec with ls to list it.`);
    if (!info.isFile()) return fail(`${quote(shown)} is not a regular file.`);
    if (!descriptorIsAt(handle.fd, file, info)) return swapped();
    const tooLarge = sizeProblem(info.size, shown);
    if (tooLarge) return tooLarge;
    return decodeText(await handle.readFile(), shown);
  } catch (err) {
    return fail(describeFsError(err, shown, "read"));
  } finally {
    await handle.close();
  }
}

// O_NONBLOCK: a FIFO in the workspace must not hang the read tool.
const READ_NOFOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Refuses a file too large to load whole; null when `size` is fine. */
export function sizeProblem(size: number, shown: string): Loaded | null {
  if (size <= MAX_TEXT_FILE_BYTES) return null;
  return { ok: false, output: failure(`${quote(shown)} is ${size} bytes, too large to load (limit ${MAX_TEXT_FILE_BYTES}); use exec with grep, sed -n or head.`) };
}

/** The bytes of a whole file as UTF-8 text, or why they are not text. */
export function decodeText(bytes: Uint8Array, shown: string): Loaded {
  const fail = (reason: string): Loaded => ({ ok: false, output: failure(reason) });
  if (bytes.includes(0)) return fail(`${quote(shown)} is a binary file (it contains NUL bytes); only text files can be read.`);
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return fail(`${quote(shown)} is a binary file (not valid UTF-8); only text files can be read.`);
  }
}

/**
 * Writes through a temp file in the same folder and renames it into place, keeping the mode of
 * a file it replaces. On failure the temp file is removed and the target is untouched.
 */
async function writeFileAtomic(file: string, content: string): Promise<void> {
  const mode = await stat(file).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", 0o666);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

function describeFsError(err: unknown, shown: string, verb: "read" | "write"): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case "ENOENT":
      return `File not found: ${quote(shown)}.`;
    case "EISDIR":
      return `${quote(shown)} is a directory, not a file.`;
    case "ENOTDIR":
      return `A parent of ${quote(shown)} is a file, not a folder.`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: cannot ${verb} ${quote(shown)}.`;
    case "ENOSPC":
      return `No space left on the disk to write ${quote(shown)}.`;
    default:
      return `Could not ${verb} ${quote(shown)}: ${e instanceof Error ? e.message : String(err)}`;
  }
}

/** Lines without their line ends; a final line end does not start another line. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

function cutLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  return `${line.slice(0, MAX_LINE_CHARS)} [... line cut: ${line.length} chars]`;
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

const toCrlf = (s: string): string => s.replace(/\r?\n/g, "\r\n");
const squashWhitespace = (s: string): string => s.replace(/\s+/g, " ").trim();
const quote = (p: string): string => JSON.stringify(p);
const failure = (content: string): ToolOutput => ({ content, isError: true });
