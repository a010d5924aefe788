// `hearth doctor --fix`: repairs what can be repaired without asking, says what it did, then the
// usual checks list what is left with the exact step. Nothing is deleted: a damaged state file is
// set aside by the same loader the daemon uses, an old config is kept as config.json.v<N>.bak.
// While the daemon runs, only file modes are touched: the lock and the state files are its own.
import { chmodSync, existsSync, lstatSync, readdirSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { ConfigError, loadConfig } from "../config/config.ts";
import { systemTimeZone } from "../fields/config-fields.ts";
import { CONFIG_UPGRADE_COPY, homePaths } from "../config/home.ts";
import { ensureHome } from "../config/init.ts";
import { migrateConfigFile } from "../config/migrations.ts";
import { listDamaged } from "../gateway/upkeep/damaged-state.ts";
import { liveHolder, readLock } from "../gateway/upkeep/lock.ts";
import { PairingStore } from "../gateway/access/pairing.ts";
import { PeopleRegistry } from "../people/registry.ts";
import { SessionStore } from "../gateway/sessions.ts";
import { silentLogger } from "../process/log.ts";
import { JobStore } from "../scheduler/job-store.ts";
import { MIN_EVERY_MS } from "../scheduler/service.ts";

export interface FixReport {
  /** One line per repair, in the order they were made. */
  fixed: string[];
  /** What was not attempted, and why. */
  skipped: string[];
}

export function fixHome(home: string, env: NodeJS.ProcessEnv): FixReport {
  const paths = homePaths(home);
  const report: FixReport = { fixed: [], skipped: [] };
  const rel = (p: string) => path.relative(home, p) || home;

  // 1. The configuration: migrated first, so that everything after reads the current shape;
  // only a valid one (a mistake is the config check's to report, in the file as it is).
  try {
    loadConfig({ home, env });
    const plan = migrateConfigFile(home, silentLogger);
    if (plan.steps.length > 0) {
      const moved = Object.keys(plan.secrets);
      if (plan.refused) report.skipped.push(`config: not migrated: ${plan.refused}`);
      else
        report.fixed.push(
          `config: migrated config.json from version ${plan.from} to ${plan.steps.at(-1)!.to} (the old file kept as ${plan.keptAs})` +
            (moved.length > 0 ? `; moved ${moved.join(", ")} to .env` : ""),
        );
    }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    report.skipped.push("config: not migrated (see the config check below)");
  }

  // 2. Modes: the home and everything that may hold a key, owner-only.
  fixMode(home, 0o700, "the home folder", report);
  fixMode(paths.secrets, 0o600, ".env", report);
  fixMode(paths.config, 0o600, "config.json", report);
  // An upgrade's copy of an older config.json still holds the keys it moved to .env.
  for (const name of readdirSync(home).filter((n) => CONFIG_UPGRADE_COPY.test(n)).sort()) fixMode(path.join(home, name), 0o600, name, report);

  const holder = liveHolder(paths.lock);
  if (holder) {
    report.skipped.push(`lock, state files and workspace: not touched while the daemon runs (pid ${holder.pid}); stop it, then run doctor --fix again`);
    return report;
  }

  // 3. A lock no live process holds.
  if (existsSync(paths.lock)) {
    const record = readLock(paths.lock);
    unlinkSync(paths.lock);
    report.fixed.push(`lock: removed ${rel(paths.lock)}, ${record ? `left by pid ${record.pid}, which is gone` : "which was unreadable"}`);
  }

  // 4. Damaged state files: read by the daemon's own loaders, which set an unusable one aside.
  const before = new Set(listDamaged(home).map((d) => d.copy));
  let timezone = systemTimeZone();
  let workspace = paths.workspace;
  try {
    const config = loadConfig({ home, env });
    timezone = config.timezone || timezone;
    workspace = config.workspace;
  } catch {
    // The config check reports it; the defaults do for the rest.
  }
  const tryOpen = (what: string, open: () => void) => {
    try {
      open();
    } catch (err) {
      report.skipped.push(`${what}: ${(err as Error).message}`);
    }
  };
  if (existsSync(paths.sessionsIndex)) tryOpen("sessions/index.json", () => SessionStore.open(paths.sessionsIndex, silentLogger, timezone));
  if (existsSync(paths.pairing)) tryOpen("pairing.json", () => PairingStore.open(paths.pairing, silentLogger));
  if (existsSync(paths.people)) tryOpen("people.json", () => PeopleRegistry.open(paths.people, silentLogger));
  if (existsSync(paths.jobs)) tryOpen("cron/jobs.json", () => new JobStore(paths.jobs, { timezone, minEveryMs: MIN_EVERY_MS }, silentLogger).load());
  for (const d of listDamaged(home)) {
    if (!before.has(d.copy)) report.fixed.push(`state: ${d.file} was damaged; set aside as ${d.copy}`);
  }

  // 5. Workspace files the templates provide, where they are missing (never overwritten).
  for (const created of ensureHome(home, { workspace })) {
    if (statSync(created).isFile()) report.fixed.push(`workspace: restored ${path.relative(workspace, created)} from the template`);
  }
  return report;
}

/**
 * Makes `file` owner-only. A symbolic link is left as it is and reported: chmod would change the
 * file it leads to, which may be anything (outside the home, another user's).
 */
function fixMode(file: string, mode: number, label: string, report: FixReport): void {
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isSymbolicLink()) {
    const target = statSync(file, { throwIfNoEntry: false });
    if (!target || (target.mode & 0o777 & ~mode) !== 0) report.skipped.push(`mode: ${label} is a symbolic link; left as it is (its target's mode is not changed through it): replace it with the file itself, or make the target owner-only by hand`);
    return;
  }
  const current = st.mode & 0o777;
  if ((current & ~mode) === 0) return;
  chmodSync(file, mode);
  report.fixed.push(`mode: ${label} was ${current.toString(8)}, now ${mode.toString(8)} (owner only)`);
}
