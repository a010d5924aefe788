// Scheduled backups: when the next one is due, what is kept, and a failure told to the owner —
// on its own and through a gateway that runs the schedule.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BackupService } from "../../src/backup/service.ts";
import { parseConfig } from "../../src/config/config.ts";
import { hearthCmd } from "../../src/process/hearth-command.ts";
import { createLogger, silentLogger } from "../../src/process/log.ts";
import { verifyBackup } from "../../src/backup/archive.ts";
import { waitFor } from "../support/daemon.ts";
import { startTestGateway } from "../support/test-gateway.ts";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-bks-"));
  mkdirSync(join(home, "workspace"));
  writeFileSync(join(home, "workspace", "MEMORY.md"), "# Memory\n");
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const DAY = 86_400_000;

function service(config: { every?: string; keep?: number; dir?: string }, told: string[] = [], now = Date.UTC(2026, 10, 25, 12)) {
  return new BackupService({ home, config: { every: "1d", keep: 7, dir: "backups", ...config }, hearth: "0.1.0", host: { tellOwner: async (t) => void told.push(t) }, log: silentLogger, clock: () => now });
}

describe("the backup section of config.json", () => {
  it("is off when absent, has defaults when present, and refuses a period under a minute", () => {
    expect(parseConfig({}, { home, env: {} }).backup).toBeUndefined();
    expect(parseConfig({ backup: {} }, { home, env: {} }).backup).toEqual({ every: "1d", keep: 7, dir: "backups" });
    expect(() => parseConfig({ backup: { every: "30s" } }, { home, env: {} })).toThrow(/must be at least a minute, such as "1d" or "12h"[\s\S]*backup\.every/u);
  });
});

describe("scheduled backups", () => {
  it("are due at once without a backup, else `every` after the newest", () => {
    const s = service({});
    expect(s.nextDueAt()).toBe(Date.UTC(2026, 10, 25, 12));
    mkdirSync(join(home, "backups"));
    const newest = join(home, "backups", "hearth-backup-20261124-100000.tar.gz");
    writeFileSync(newest, "x");
    utimesSync(newest, new Date(Date.UTC(2026, 10, 24, 10)), new Date(Date.UTC(2026, 10, 24, 10)));
    expect(s.nextDueAt()).toBe(Date.UTC(2026, 10, 24, 10) + DAY);
  });

  it("keep the newest `keep` of their own files and touch nothing else", async () => {
    mkdirSync(join(home, "backups"));
    for (const d of ["20261120", "20261121", "20261122"]) writeFileSync(join(home, "backups", `hearth-backup-${d}-000000.tar.gz`), "old");
    writeFileSync(join(home, "backups", "my-notes.txt"), "mine");
    const told: string[] = [];
    await service({ keep: 2 }, told).runOnce();
    expect(told).toEqual([]);
    expect(readdirSync(join(home, "backups")).sort()).toEqual(["hearth-backup-20261122-000000.tar.gz", "hearth-backup-20261125-120000.tar.gz", "my-notes.txt"]);
  });

  it("are made in a process of their own, so the daemon keeps none of their memory; the archive holds the home", async () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", sink: { write: (l) => void lines.push(l) } });
    await new BackupService({ home, config: { every: "1d", keep: 7, dir: "backups" }, hearth: "0.1.0", host: { tellOwner: async () => {} }, log, clock: () => Date.UTC(2026, 10, 25, 12) }).runOnce();
    const done = lines.map((l) => JSON.parse(l) as { event: string; pid?: number; files?: number }).find((r) => r.event === "backup.done")!;
    expect(done.pid).toEqual(expect.any(Number));
    expect(done.pid).not.toBe(process.pid);
    const file = join(home, "backups", "hearth-backup-20261125-120000.tar.gz");
    const verified = await verifyBackup(file);
    expect(verified.ok).toBe(true);
    expect(verified.ok && verified.manifest.files.map((f) => f.path)).toContain("workspace/MEMORY.md");
  });

  it("tell the owner when one fails", async () => {
    writeFileSync(join(home, "not-a-folder"), "");
    const told: string[] = [];
    await service({ dir: "not-a-folder/backups" }, told).runOnce();
    expect(told).toEqual([
      `The scheduled backup failed: ENOTDIR: not a directory, mkdir '${join(home, "not-a-folder", "backups")}'. I will try again in 1d; \`${hearthCmd("backup create")}\` makes one by hand.`,
    ]);
  });

  it("run with the gateway's schedule; a failure reaches the owner (the terminal's mailbox when no chat is known)", async () => {
    writeFileSync(join(home, "not-a-folder"), "");
    const t = await startTestGateway("http://127.0.0.1:9", { home, memory: false, schedule: true, config: { backup: { dir: "not-a-folder/backups" } } });
    try {
      await waitFor("the failure notice", () => {
        try {
          return readFileSync(join(home, "terminal-mailbox.json"), "utf8").includes("The scheduled backup failed: ENOTDIR");
        } catch {
          return false;
        }
      });
    } finally {
      await t.stop();
    }
  });
});
