// Finding the processes of an unsandboxed command after they left its process group (setsid,
// double fork): every command's environment carries HEARTH_EXEC_ID=<home tag>.<uuid>, which its
// children inherit. Same-user processes' environments are readable in /proc, so a scan finds
// them. A process that clears its environment (env -i) is not found: only bwrap's PID
// namespace catches those.
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

export const EXEC_MARKER_VAR = "HEARTH_EXEC_ID";

/** A short tag for a home folder: one daemon per home (the lock), so the tag names its commands. */
export function markerPrefixFor(home: string): string {
  let real = home;
  try {
    real = realpathSync(home);
  } catch {
    // not created yet: the path as given
  }
  return createHash("sha256").update(real).digest("hex").slice(0, 12);
}

export const newMarker = (prefix: string): string => `${prefix}.${randomUUID()}`;

/** SIGKILLs every process carrying exactly this marker, until none is left (one may fork meanwhile). */
export async function killMarked(marker: string): Promise<number> {
  if (process.platform !== "linux") return 0;
  const needle = `${EXEC_MARKER_VAR}=${marker}\0`;
  let killed = 0;
  for (let round = 0; round < 5; round++) {
    const pids = await markedPids((environ) => hasEntry(environ, needle));
    if (pids.length === 0) break;
    killed += killAll(pids);
    await sleep(10);
  }
  return killed;
}

/**
 * At start, with the home's lock held: SIGKILLs what the commands of an earlier daemon on this
 * home left running (it was killed before it could end them). Synchronous; a few ms.
 */
export function killOrphanedCommands(prefix: string): number {
  if (process.platform !== "linux") return 0;
  const needle = `${EXEC_MARKER_VAR}=${prefix}.`;
  const pids: number[] = [];
  for (const name of procPids()) {
    try {
      if (hasEntry(readFileSync(`/proc/${name}/environ`), needle)) pids.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return killAll(pids);
}

async function markedPids(matches: (environ: Buffer) => boolean): Promise<number[]> {
  const found: number[] = [];
  await Promise.all(
    procPids().map(async (name) => {
      const environ = await readFile(`/proc/${name}/environ`).catch(() => null);
      if (environ && matches(environ)) found.push(Number(name));
    }),
  );
  return found;
}

function procPids(): string[] {
  try {
    return readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
}

/** Whether the NUL-separated environment has an entry starting with `prefix`. */
function hasEntry(environ: Buffer, prefix: string): boolean {
  const needle = Buffer.from(prefix);
  if (environ.subarray(0, needle.length).equals(needle)) return true;
  return environ.includes(Buffer.concat([Buffer.from([0]), needle]));
}

function killAll(pids: number[]): number {
  let killed = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
      killed++;
    } catch {
      // gone already, or not ours
    }
  }
  return killed;
}
