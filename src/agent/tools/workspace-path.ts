// Path confinement for the file tools: a path the model names is used only if its real location,
// after every symlink, lies inside the workspace's real location.
import { lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";

export type WorkspacePath =
  /** `path` is the real absolute location to hand to fs; `relative` is for messages to the model. */
  | { ok: true; path: string; relative: string }
  | { ok: false; reason: string };

const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves `requested` (relative to the workspace, or absolute) to a location inside the
 * workspace, or says why not. Never throws. Checks the filesystem as it is now: a symlink
 * swapped in after the check is caught when the file is opened (descriptorIsAt).
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<WorkspacePath> {
  const shown = JSON.stringify(requested);
  if (requested.trim() === "") return { ok: false, reason: "The path is empty; give a file path inside the workspace." };
  if (requested.includes("\0")) return { ok: false, reason: `The path ${shown} contains a NUL byte.` };

  const root = path.resolve(workspace);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch (err) {
    return { ok: false, reason: `The workspace folder is not accessible (${codeOf(err)}).` };
  }

  const target = path.resolve(root, requested);
  let realTarget: string;
  try {
    realTarget = await realLocation(target, 0);
  } catch (err) {
    return { ok: false, reason: `The path ${shown} could not be resolved (${codeOf(err)}).` };
  }

  if (!isInside(realRoot, realTarget)) {
    // Lexically inside but really outside means a symlink led out; say so, it changes what to do.
    const viaSymlink = isInside(root, target) || isInside(realRoot, target);
    return {
      ok: false,
      reason: viaSymlink
        ? `Refused ${shown}: it leads through a symlink to a place outside the workspace. The file tools only reach files inside the workspace.`
        : `Refused ${shown}: it is outside the workspace. The file tools only reach files inside the workspace; use a path relative to it.`,
    };
  }
  return { ok: true, path: realTarget, relative: path.relative(realRoot, realTarget) || "." };
}

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The real location of `p`, which need not exist: the real path of its nearest existing
 * ancestor plus the missing tail. A dangling symlink is followed to where it points, since
 * writing through it would create the file there.
 */
async function realLocation(p: string, hops: number): Promise<string> {
  try {
    return await realpath(p);
  } catch (err) {
    const code = codeOf(err);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = await realLocation(parent, hops);
  const link = await lstat(p).then(
    (st) => (st.isSymbolicLink() ? readlink(p) : null),
    () => null,
  );
  if (link === null) return path.join(realParent, path.basename(p));
  if (hops >= MAX_SYMLINK_HOPS) throw Object.assign(new Error("too many symlinks"), { code: "ELOOP" });
  return realLocation(path.resolve(realParent, link), hops + 1);
}

function codeOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : String(err);
}

/**
 * Is the open descriptor `fd` (whose fstat is `st`) the file at `abs`, a real path, reached
 * through real folders? Closes the gap between resolving a path and opening it: a folder or
 * file swapped for a symlink in between is caught here, before a byte is read or written.
 * On Linux the kernel's own path of the descriptor decides; elsewhere the path must still name
 * the same inode and its folder must resolve to itself.
 */
export function descriptorIsAt(fd: number, abs: string, st: Stats): boolean {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`) === abs;
  } catch {
    // no /proc: fall through
  }
  try {
    const now = lstatSync(abs);
    return now.dev === st.dev && now.ino === st.ino && realpathSync(path.dirname(abs)) === path.dirname(abs);
  } catch {
    return false;
  }
}
