// One gateway per home (DESIGN §11): an exclusive lock file naming its owner by pid AND by the
// process's start time. A pid alone proves nothing after a reboot or once pids wrap around: the
// number may now belong to an unrelated process. A lock whose process is gone, or whose pid now
// belongs to a process started at another time, is stale and taken over.
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hearthCmd } from "../../process/hearth-command.ts";
import { isAlive, procStat } from "../../process/info.ts";

export { isAlive };

/** What the lock file records about its owner. */
export interface LockRecord {
  pid: number;
  /** Start time of the process in clock ticks since boot (/proc/<pid>/stat field 22); null without /proc. */
  startTicks: string | null;
  /** /proc/sys/kernel/random/boot_id when the lock was taken; null without it. */
  bootId: string | null;
  startedAt: string;
}

export class LockHeldError extends Error {
  readonly pid: number;
  constructor(path: string, holder: LockRecord) {
    super(
      `Another Hearth gateway (pid ${holder.pid}, running since ${holder.startedAt}) is already running on this home (${path}). ` +
        `Stop it with \`${hearthCmd("stop")}\` (through pm2 or systemd when one of them runs it), or use another HEARTH_HOME. ` +
        `Before killing anything by hand, check that pid ${holder.pid} really is Hearth: \`ps -o pid,lstart,args -p ${holder.pid}\` ` +
        `should show \`hearth.js start\`; ${hearthCmd("status")} and ${hearthCmd("doctor")} say whether it answers.`,
    );
    this.name = "LockHeldError";
    this.pid = holder.pid;
  }
}

export interface GatewayLock {
  readonly path: string;
  release(): void;
}

/** This process as a lock record. */
export function selfRecord(): LockRecord {
  return { pid: process.pid, startTicks: startTicksOf(process.pid), bootId: bootId(), startedAt: new Date().toISOString() };
}

/** Takes the lock or throws LockHeldError naming the live holder. */
export function acquireLock(path: string): GatewayLock {
  const me = selfRecord();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: "wx", mode: 0o600 });
      return {
        path,
        release: () => {
          if (readLock(path)?.pid === process.pid) unlinkSync(path);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = liveHolder(path);
    if (holder) throw new LockHeldError(path, holder);
    try {
      unlinkSync(path); // stale: its process is gone, the pid was reused, or the file is garbage
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  throw new Error(`Could not take the gateway lock ${path}: it keeps reappearing. Is another gateway starting right now?`);
}

/** The lock's record when the process it names is still the one that took it; else null. */
export function liveHolder(path: string): LockRecord | null {
  const record = readLock(path);
  return record && isSameProcess(record) ? record : null;
}

/** The lock file's record, or null when there is none or it is unreadable. */
export function readLock(path: string): LockRecord | null {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as Partial<Record<keyof LockRecord, unknown>>;
    const pid = Number(v.pid);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    return {
      pid,
      startTicks: typeof v.startTicks === "string" ? v.startTicks : null,
      bootId: typeof v.bootId === "string" ? v.bootId : null,
      startedAt: typeof v.startedAt === "string" ? v.startedAt : "an unknown time",
    };
  } catch {
    return null;
  }
}

/** True when the process the record names still runs: same pid, same boot, same start time. */
export function isSameProcess(record: LockRecord): boolean {
  if (!isAlive(record.pid)) return false;
  const ticks = startTicksOf(record.pid);
  if (ticks === null) return true; // no /proc (macOS): the signal check has to do
  const boot = bootId();
  if (record.bootId && boot && record.bootId !== boot) return false;
  if (record.startTicks !== null) return record.startTicks === ticks;
  // A lock written before start times were recorded: believe it only if the process is a Hearth daemon.
  return isHearthDaemon(record.pid);
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function startTicksOf(pid: number): string | null {
  return procStat(pid)?.[22 - 3] ?? null;
}

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

function isHearthDaemon(pid: number): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.includes("start") && args.some((a) => /(^|\/)(hearth(\.js)?|cli\.ts)$/.test(a));
  } catch {
    return false;
  }
}
