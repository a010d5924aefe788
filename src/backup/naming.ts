// Names and words shared by `hearth backup` and the scheduled backups.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expandHome } from "../config/home.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import type { LeftOut } from "./snapshot.ts";

/** `hearth-backup-20261125-183000.tar.gz` (UTC): sorts by time. */
export function backupFileName(at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/gu, "").replace("T", "-").slice(0, 15);
  return `hearth-backup-${stamp}.tar.gz`;
}

export const BACKUP_FILE = /^hearth-backup-\d{8}-\d{6}\.tar\.gz$/u;

/** config `backup.dir`: `~` expanded, relative to the home. */
export function backupDirOf(home: string, dir: string): string {
  return path.resolve(home, expandHome(dir));
}

/** One line of what a backup did not take, and what that means. */
export function leftOutLine(l: LeftOut): string {
  switch (l.reason) {
    case "rebuilt":
      if (l.path === "mcp-home") return `Left out: ${l.path} (the MCP servers' caches; remade when they start)`;
      if (l.path === "packages") return `Left out: ${l.path} (the chat channels' libraries, from npm; \`${hearthCmd("setup")}\` installs them again)`;
      return `Left out: ${l.path} (the search index; rebuilt at the next start)`;
    case "secret":
      return `Left out: ${l.path} (secrets; add --include-secrets to keep them)`;
    case "backups":
      return `Left out: ${l.path} (earlier backups)`;
    case "runtime":
      return `Left out: ${l.path} (the running daemon's)`;
    case "not a regular file":
      return `Left out: ${l.path} (not a regular file: links are never followed)`;
    case "unreadable":
      return `Left out: ${l.path} (could not be read)`;
    default:
      l.reason satisfies never;
      return `Left out: ${l.path}`;
  }
}

/** Hearth's version (package.json), recorded in each manifest. */
export function hearthVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}
