// The home's log files stay bounded whoever appends to them: a file over the limit is copied
// to .1 (older copies moving up, the oldest dropped) and truncated in place, and a writer that
// holds it open for appending goes on at its new start.
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { rotateLogs } from "../../../src/gateway/upkeep/log-rotation.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-logs-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("log rotation", () => {
  it("copies a file over the limit to .1 and empties it; an appending writer continues at the start", () => {
    const file = join(dir, "hearth.out.log");
    const fd = openSync(file, "a", 0o600);
    writeSync(fd, "x".repeat(150) + "\n");
    writeFileSync(join(dir, "hearth.err.log"), "small\n");
    expect(rotateLogs({ dir, maxBytes: 100, keep: 3 })).toEqual(["hearth.out.log"]);
    expect(readFileSync(`${file}.1`, "utf8")).toBe("x".repeat(150) + "\n");
    writeSync(fd, "after\n");
    closeSync(fd);
    expect(readFileSync(file, "utf8")).toBe("after\n");
    expect(readFileSync(join(dir, "hearth.err.log"), "utf8")).toBe("small\n");
  });

  it("keeps `keep` copies, newest first, and drops the oldest", () => {
    const file = join(dir, "hearth.err.log");
    for (let i = 1; i <= 5; i++) {
      writeFileSync(file, `${String(i).repeat(200)}\n`);
      rotateLogs({ dir, maxBytes: 100, keep: 3 });
    }
    expect(readdirSync(dir).sort()).toEqual(["hearth.err.log", "hearth.err.log.1", "hearth.err.log.2", "hearth.err.log.3"]);
    expect([1, 2, 3].map((n) => readFileSync(`${file}.${n}`, "utf8")[0])).toEqual(["5", "4", "3"]);
  });

  it("does nothing without a logs folder", () => {
    expect(rotateLogs({ dir: join(dir, "none"), maxBytes: 1, keep: 3 })).toEqual([]);
  });
});
