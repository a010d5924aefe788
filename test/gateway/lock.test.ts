import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, LockHeldError } from "../../src/gateway/lock.ts";

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
});
