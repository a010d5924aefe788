// How the user runs Hearth, for every hint that names a command ("start it with: … start"):
// `hearth` when that name on the PATH is this Hearth, `npx hearth` from the project folder (the
// way the README has it), otherwise the launcher's full path.
import { accessSync, constants, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = fileURLToPath(new URL("../../", import.meta.url));
const launcher = path.join(projectRoot, "bin", "hearth.js");

export interface Invocation {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** Decides the command prefix for `inv`; see hearthCommand for the cached one of this process. */
export function commandFor(inv: Invocation): string {
  if (inv.env.npm_lifecycle_event === "npx") return "npx hearth";
  if (onPath("hearth", inv.env.PATH ?? "") === realpath(launcher)) return "hearth";
  if (isInside(inv.cwd, projectRoot)) return "npx hearth";
  return `node ${launcher}`;
}

let cached: string | null = null;

/** The command prefix as the user of this process types it, e.g. "npx hearth". */
export function hearthCommand(): string {
  cached ??= commandFor({ env: process.env, cwd: process.cwd() });
  return cached;
}

/** `hearth <args>` the way the user runs it, e.g. hearthCmd("start") → "npx hearth start". */
export const hearthCmd = (args: string): string => `${hearthCommand()} ${args}`;

/**
 * How the owner starts the daemon in the foreground: `npm start` from the project folder, as the
 * README's quick start has it (it passes the daemon's node arguments), else `hearth start`.
 */
export const startCmd = (): string => (hearthCommand() === "npx hearth" ? "npm start" : hearthCmd("start"));

/** The real path of the first executable `name` on `pathVar`, or null. */
function onPath(name: string, pathVar: string): string | null {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return realpath(candidate);
    } catch {
      // not here
    }
  }
  return null;
}

function realpath(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

function isInside(dir: string, root: string): boolean {
  const rel = path.relative(realpath(root) ?? root, realpath(dir) ?? dir);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}
