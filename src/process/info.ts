// What /proc says of another process: alive or not (a zombie counts as dead), and its stat
// fields. Shared by the gateway lock and the state files' temp-file sweep.
import { readFileSync } from "node:fs";

/** True when `pid` is a live process (a zombie waiting to be reaped counts as dead). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const stat = procStat(pid);
  return stat === null || stat[0] !== "Z";
}

/** Fields after the command name of /proc/<pid>/stat (field 3 onwards), or null without /proc. */
export function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may itself contain spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).trim().split(" ");
  } catch {
    return null;
  }
}
