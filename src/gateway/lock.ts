// One gateway per home (DESIGN §11): an exclusive lock file holding the owner's pid. A lock
// left by a dead process (kill -9, power loss) is taken over.
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";

export class LockHeldError extends Error {
  readonly pid: number;
  constructor(path: string, pid: number) {
    super(`Another Hearth gateway (pid ${pid}) is already running on this home (${path}). Stop it first, or use another HEARTH_HOME.`);
    this.name = "LockHeldError";
    this.pid = pid;
  }
}

export interface GatewayLock {
  readonly path: string;
  release(): void;
}

/** True when `pid` is a live process (a zombie waiting to be reaped counts as dead). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true; // no /proc (macOS): the signal check has to do
  }
}

/** Takes the lock or throws LockHeldError naming the live holder. */
export function acquireLock(path: string): GatewayLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() })}\n`, { flag: "wx", mode: 0o600 });
      return {
        path,
        release: () => {
          if (holderOf(path) === process.pid) unlinkSync(path);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = holderOf(path);
    if (holder !== null && isAlive(holder)) throw new LockHeldError(path, holder);
    try {
      unlinkSync(path); // stale: its process is gone (or the file is unreadable garbage)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  throw new Error(`Could not take the gateway lock ${path}: it keeps reappearing. Is another gateway starting right now?`);
}

/** The pid in the lock file, or null when there is none or it is unreadable. */
export function holderOf(path: string): number | null {
  try {
    const pid = Number((JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown }).pid);
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}
