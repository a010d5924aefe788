// `hearth backup create [--out FILE] [--include-secrets]` (by default into `<home>/backups/`), `backup verify FILE` and
// `backup restore FILE [--home DIR] [--force]`. They work on the files; the daemon may run
// during create and verify, never on the home a restore replaces.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { createBackup, restoreBackup, verifyBackup } from "../backup/archive.ts";
import { backupDirOf, backupFileName, leftOutLine } from "../backup/naming.ts";
import { loadConfig } from "../config/config.ts";
import { homePaths } from "../config/home.ts";
import { missingSecrets } from "../config/missing-secrets.ts";
import { liveHolder } from "../gateway/upkeep/lock.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { parse, UsageError } from "./args.ts";

interface BackupIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runBackup(home: string, args: string[], io: BackupIo, hearth: string): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "create":
      return create(home, rest, io, hearth);
    case "verify":
      return verify(rest, io);
    case "restore":
      return restore(home, rest, io);
    default:
      throw new UsageError(sub === undefined ? "backup needs a subcommand: create, verify or restore." : `Unknown backup subcommand "${sub}" (create, verify or restore).`);
  }
}

async function create(home: string, args: string[], io: BackupIo, hearth: string): Promise<number> {
  const { values } = parse(args, { out: { type: "string" }, "include-secrets": { type: "boolean" } });
  const now = new Date();
  const dirs = [homePaths(home).backups];
  let outside: string | null = null;
  // A config that does not load still gets backed up; only its backup folder is then unknown.
  try {
    const config = loadConfig({ home });
    if (config.backup) dirs.push(backupDirOf(home, config.backup.dir));
    const rel = path.relative(home, config.workspace);
    if (rel.startsWith("..") || path.isAbsolute(rel)) outside = config.workspace;
  } catch {}
  // By default into the home's backups folder (the scheduled backups' when configured), never the
  // current folder: that is often the Hearth checkout, where the owner's notes would sit beside
  // the code, one `git add .` from being published.
  const out = path.resolve(values.out ?? path.join(dirs.at(-1)!, backupFileName(now)));
  if (values.out === undefined) mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
  const made = await createBackup({ home, out, includeSecrets: values["include-secrets"] === true, backupDirs: dirs, hearth, now });
  io.stdout.write(`Backup written: ${made.file} (${made.files} files, ${formatBytes(made.bytes)})\n`);
  for (const l of made.left) io.stdout.write(`${leftOutLine(l)}\n`);
  if (made.redacted.length) io.stdout.write(`Left out: the secret values in config.json (${made.redacted.join(", ")}); add --include-secrets to keep them\n`);
  if (outside) io.stdout.write(`Not in this backup: the workspace at ${outside}, which is outside the home; back it up separately\n`);
  return 0;
}

async function verify(args: string[], io: BackupIo): Promise<number> {
  const { positionals } = parse(args, {}, true);
  const file = onlyFile(positionals, "backup verify");
  const result = await verifyBackup(file);
  if (result.ok) {
    io.stdout.write(`OK: all ${result.manifest.files.length} files match the manifest (made ${result.manifest.createdAt} by Hearth ${result.manifest.hearth}).\n`);
    return 0;
  }
  io.stdout.write(`FAILED: ${file}\n${result.problems.map((p) => `  ${p}\n`).join("")}`);
  return 1;
}

async function restore(home: string, args: string[], io: BackupIo): Promise<number> {
  const { values, positionals } = parse(args, { home: { type: "string" }, force: { type: "boolean" } }, true);
  const file = onlyFile(positionals, "backup restore");
  const target = path.resolve(values.home ?? home);
  const holder = liveHolder(homePaths(target).lock);
  if (holder) {
    io.stderr.write(`hearth: Hearth is running on ${target} (pid ${holder.pid}); nothing was changed. Stop it first, then restore.\n`);
    return 1;
  }
  const result = await restoreBackup(file, target, { force: values.force === true });
  switch (result.type) {
    case "invalid":
      io.stderr.write(`hearth: not restored, nothing was changed: ${file} failed verification:\n${result.problems.map((p) => `  ${p}\n`).join("")}`);
      return 1;
    case "not-empty":
      io.stderr.write(`hearth: ${target} is not empty; nothing was changed. Restore into an empty folder (--home DIR), or add --force to move the current home aside first.\n`);
      return 1;
    case "restored": {
      io.stdout.write(`Restored ${result.files} files into ${target}.\n`);
      if (result.replaced) io.stdout.write(`The previous home was moved to ${result.replaced}.\n`);
      for (const l of result.manifest.left) io.stdout.write(`${leftOutLine(l)}\n`);
      const redacted = result.manifest.files.flatMap((f) => f.redacted ?? []);
      if (redacted.length) io.stdout.write(`config.json came without its secret values (${redacted.join(", ")}): set them again (or their environment variables) before starting.\n`);
      const leftEnv = result.manifest.left.some((l) => l.reason === "secret" && l.path === ".env");
      if (redacted.length || leftEnv) io.stdout.write(lacksText(target, leftEnv, target !== path.resolve(home)));
      return 0;
    }
    default:
      result satisfies never;
      return 1;
  }
}

/**
 * What the restored home lacks that the left-out secrets held, and the command that adds it;
 * "" when it lacks nothing. `leftEnv`: the backup left `.env` out. `otherHome`: restored
 * elsewhere than the home `hearth` uses now.
 */
function lacksText(target: string, leftEnv: boolean, otherHome: boolean): string {
  const missing = missingSecrets(target);
  if (missing.length === 0) return "";
  const setup = `${otherHome ? `HEARTH_HOME=${target} ` : ""}${hearthCmd("setup")}`;
  return (
    (leftEnv ? "The restored home has no .env (the backup left its secrets out), so it lacks:\n" : "The restored home lacks the secret values the backup left out of config.json:\n") +
    missing.map((m) => `  ${m.what} (${m.variable}): ${m.effect}\n`).join("") +
    `Add ${missing.length === 1 ? "it" : "them"} with \`${setup}\`, or copy your old .env into ${target}.\n`
  );
}

function onlyFile(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`${command} takes one archive file${positionals.length > 1 ? ` (got ${positionals.length})` : ""}.`);
  return path.resolve(positionals[0]!);
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
