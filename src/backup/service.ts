// Scheduled backups (config `backup: { every, keep, dir }`): a service the gateway starts with
// the scheduler. The next backup is due `every` after the newest one in `dir` (at once when there
// is none), so restarts neither skip nor repeat one. After each, all but the newest `keep` of its
// own files are deleted; a failure is logged and told to the owner, and retried `every` later.
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { parseDuration } from "../fields/config-fields.ts";
import { homePaths } from "../config/home.ts";
import type { Config } from "../config/schema.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import type { Logger } from "../process/log.ts";
import { createBackupApart } from "./apart.ts";
import { BACKUP_FILE, backupDirOf, backupFileName } from "./naming.ts";

/** What the backups need from the gateway. */
export interface BackupHost {
  /** Sends `text` to the owner's most recent chat. Resolves when done; never rejects (failures are the host's to log). */
  tellOwner(text: string): Promise<void>;
}

export interface BackupServiceOptions {
  home: string;
  config: NonNullable<Config["backup"]>;
  /** Hearth's version, for the manifest. */
  hearth: string;
  host: BackupHost;
  log: Logger;
  clock?: () => number;
}

/** setTimeout's longest delay; a later due time is reached in steps. */
const MAX_DELAY = 2 ** 31 - 1;

export class BackupService {
  private readonly opts: BackupServiceOptions;
  private readonly dir: string;
  private readonly everyMs: number;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(opts: BackupServiceOptions) {
    this.opts = opts;
    this.dir = backupDirOf(opts.home, opts.config.dir);
    this.everyMs = parseDuration(opts.config.every)!;
    this.clock = opts.clock ?? Date.now;
  }

  start(): void {
    if (this.stopped || this.timer) return;
    this.arm(this.nextDueAt() - this.clock());
  }

  /** When the next backup is due: `every` after the newest backup file in the folder, or now. */
  nextDueAt(): number {
    const newest = this.backups().at(-1);
    return newest ? statSync(path.join(this.dir, newest)).mtimeMs + this.everyMs : this.clock();
  }

  /** Makes one backup now and prunes old ones; never throws (a failure is logged and told to the owner). */
  async runOnce(): Promise<void> {
    const at = new Date(this.clock());
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      // In a process of its own: its buffers never stay in the daemon (apart.ts).
      const made = await createBackupApart({ home: this.opts.home, out: path.join(this.dir, backupFileName(at)), includeSecrets: false, backupDirs: [this.dir, homePaths(this.opts.home).backups], hearth: this.opts.hearth, now: at });
      const removed = this.prune();
      this.opts.log.info("backup.done", { file: made.file, files: made.files, bytes: made.bytes, removed, pid: made.pid });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.opts.log.error("backup.failed", { dir: this.dir, error: err });
      await this.opts.host.tellOwner(`The scheduled backup failed: ${reason}. I will try again in ${this.opts.config.every}; \`${hearthCmd("backup create")}\` makes one by hand.`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private arm(delayMs: number): void {
    if (this.stopped) return;
    const delay = Math.max(0, Math.min(delayMs, MAX_DELAY));
    this.timer = setTimeout(() => {
      this.timer = null;
      if (delayMs > MAX_DELAY) return this.arm(delayMs - MAX_DELAY);
      this.running = this.runOnce().finally(() => {
        this.running = null;
        this.arm(this.everyMs);
      });
    }, delay);
    this.timer.unref();
  }

  /** Backup files of ours in the folder, oldest first (the names sort by time). */
  private backups(): string[] {
    try {
      return readdirSync(this.dir).filter((n) => BACKUP_FILE.test(n)).sort();
    } catch {
      return [];
    }
  }

  /** Deletes all but the newest `keep` of our own backups; returns how many went. */
  private prune(): number {
    const old = this.backups().slice(0, -this.opts.config.keep);
    for (const name of old) rmSync(path.join(this.dir, name), { force: true });
    return old.length;
  }
}
