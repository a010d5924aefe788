import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, LockHeldError, readLock, selfRecord } from "../../../src/gateway/upkeep/lock.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-lock-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("gateway lock", () => {
  it("refuses a second holder while the first lives, naming its pid", () => {
    const path = join(dir, "gateway.lock");
    const lock = acquireLock(path);
    expect(() => acquireLock(path)).toThrow(LockHeldError);
    expect(() => acquireLock(path)).toThrow(`pid ${process.pid}`);
    // The message says how to check the pid before killing anything; it never says "kill".
    expect(() => acquireLock(path)).toThrow(`check that pid ${process.pid} really is Hearth: \`ps -o pid,lstart,args -p ${process.pid}\``);
    expect(() => acquireLock(path)).not.toThrow(/\bkill /);
    lock.release();
    expect(existsSync(path)).toBe(false);
    acquireLock(path).release();
  });

  it("takes over a lock whose process is dead", () => {
    const path = join(dir, "gateway.lock");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    writeFileSync(path, JSON.stringify({ pid: Number(dead) }));
    const lock = acquireLock(path);
    lock.release();
  });

  it("takes over an unreadable lock file", () => {
    const path = join(dir, "gateway.lock");
    writeFileSync(path, "garbage");
    acquireLock(path).release();
  });

  it("records the owner's start time and boot", () => {
    const path = join(dir, "gateway.lock");
    const lock = acquireLock(path);
    const record = readLock(path)!;
    expect(record.pid).toBe(process.pid);
    expect(record.startTicks).toMatch(/^\d+$/);
    expect(record.bootId).toMatch(/^[0-9a-f-]{36}$/);
    lock.release();
  });

  it("takes over a lock whose pid is alive but belongs to a process started at another time (pid reuse)", () => {
    const path = join(dir, "gateway.lock");
    writeFileSync(path, JSON.stringify({ ...selfRecord(), pid: 1, startTicks: "999999999" }));
    acquireLock(path).release();
    writeFileSync(path, JSON.stringify({ ...selfRecord(), startTicks: String(Number(selfRecord().startTicks) + 1) }));
    acquireLock(path).release();
  });

  it("takes over a lock from before a reboot even when pid and start time match by chance", () => {
    const path = join(dir, "gateway.lock");
    writeFileSync(path, JSON.stringify({ ...selfRecord(), bootId: "00000000-0000-0000-0000-000000000000" }));
    acquireLock(path).release();
  });

  it("takes over an old-style lock (pid only) whose live pid is not a Hearth daemon", () => {
    const path = join(dir, "gateway.lock");
    writeFileSync(path, JSON.stringify({ pid: process.pid })); // the test runner: alive, not Hearth
    acquireLock(path).release();
    writeFileSync(path, JSON.stringify({ pid: 1 }));
    acquireLock(path).release();
  });
});
