// The generic state-file machinery: validating loaders, damaged files set aside, appends that
// never glue records, atomic writes that leave no temp file.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { describeDamaged, listDamaged } from "../../src/gateway/upkeep/damaged-state.ts";
import { createLogger, silentLogger } from "../../src/process/log.ts";
import {
  appendDurable,
  appendRecord,
  cutTornTail,
  DISK_FULL_REPLY,
  internalErrorText,
  loadJsonFile,
  readJsonLines,
  salvageArray,
  setAsideDamaged,
  writeFileAtomic,
} from "../../src/state/storage.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-storage-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function capture(): { log: ReturnType<typeof createLogger>; events: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  return { log: createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } }), events: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const point = z.object({ x: z.number() });
const fileSchema = z.object({ points: z.array(point) });
const NOW = Date.parse("2026-11-23T10:41:07.123Z");

describe("readJsonLines", () => {
  it("skips lines that are not JSON or of the wrong shape, and logs the file and each line number", () => {
    const path = join(dir, "log.jsonl");
    writeFileSync(path, '{"x":1}\nnull\n{"type":"accepted"}\n\n{"x":2}\n{"x":');
    const { log, events } = capture();
    const r = readJsonLines(path, point, log);
    expect(r.values).toEqual([{ x: 1 }, { x: 2 }]);
    expect(r.badLines).toEqual([2, 3, 6]);
    expect(events().map((e) => [e.event, e.file, e.lines])).toEqual([["state.records_skipped", path, [2, 3, 6]]]);
    expect(r.problems.map((p) => p.split(":")[0])).toEqual(["line 2", "line 3", "line 6"]);
  });

  it("treats a missing file as empty and logs nothing", () => {
    const { log, events } = capture();
    expect(readJsonLines(join(dir, "none.jsonl"), point, log)).toEqual({ values: [], badLines: [], problems: [] });
    expect(events()).toEqual([]);
  });
});

describe("loadJsonFile", () => {
  it("moves a file that is not JSON aside under a .damaged- name, byte for byte, and reports it", () => {
    const path = join(dir, "pairing.json");
    writeFileSync(path, '{"approved": [{"channel":"tele');
    const { log, events } = capture();
    const r = loadJsonFile(path, { schema: fileSchema, log, now: NOW });
    const copy = `${path}.damaged-2026-11-23T10-41-07-123Z`;
    expect(r).toEqual({ status: "damaged", problem: expect.stringMatching(/^is not valid JSON/), damagedCopy: copy });
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(copy, "utf8")).toBe('{"approved": [{"channel":"tele');
    expect(events().map((e) => [e.level, e.event, e.file, e.keptAs])).toEqual([["error", "state.file_damaged", path, copy]]);
    expect(listDamaged(dir).map(describeDamaged)).toEqual([
      "pairing.json was damaged; the original is kept as pairing.json.damaged-2026-11-23T10-41-07-123Z and Hearth went on with what it could read",
    ]);
  });

  it("never overwrites an earlier damaged copy, even one of the same millisecond", () => {
    const path = join(dir, "index.json");
    writeFileSync(path, "first");
    loadJsonFile(path, { schema: fileSchema, log: silentLogger, now: NOW });
    writeFileSync(path, "second");
    const r = loadJsonFile(path, { schema: fileSchema, log: silentLogger, now: NOW });
    expect(r.status === "damaged" && r.damagedCopy).toBe(`${path}.damaged-2026-11-23T10-41-07-123Z-1`);
    expect(readFileSync(`${path}.damaged-2026-11-23T10-41-07-123Z`, "utf8")).toBe("first");
    expect(readFileSync(`${path}.damaged-2026-11-23T10-41-07-123Z-1`, "utf8")).toBe("second");
  });

  it("keeps the valid records of a wrong-shaped file and a copy of the file as it was", () => {
    const path = join(dir, "points.json");
    const text = '{"points":[{"x":1},null,{"x":"two"},{"x":3}]}';
    writeFileSync(path, text);
    const { log, events } = capture();
    const r = loadJsonFile(path, {
      schema: fileSchema,
      log,
      now: NOW,
      salvage: (raw) => {
        const s = salvageArray((raw as { points?: unknown }).points, "points", point);
        return { value: { points: s.value }, dropped: s.dropped };
      },
    });
    expect(r.status === "ok" && r.value).toEqual({ points: [{ x: 1 }, { x: 3 }] });
    expect(readFileSync(path, "utf8")).toBe(text); // the caller rewrites it; the copy outlives that
    expect(readFileSync(`${path}.damaged-2026-11-23T10-41-07-123Z`, "utf8")).toBe(text);
    const [e] = events();
    expect([e!.event, e!.file, (e!.dropped as string[]).map((d) => d.split(":")[0])]).toEqual(["state.records_dropped", path, ["points[1]", "points[2]"]]);
  });

  it("reads a valid file without touching it, and a missing one as missing", () => {
    const path = join(dir, "ok.json");
    writeFileSync(path, '{"points":[]}');
    expect(loadJsonFile(path, { schema: fileSchema, log: silentLogger })).toEqual({ status: "ok", value: { points: [] } });
    expect(loadJsonFile(join(dir, "nope.json"), { schema: fileSchema, log: silentLogger })).toEqual({ status: "missing" });
    expect(readdirSync(dir)).toEqual(["ok.json"]);
  });

  it("removes temp files that a dead writer left beside the file, and keeps a live writer's", () => {
    const path = join(dir, "index.json");
    writeFileSync(path, '{"points":[]}');
    writeFileSync(`${path}.tmp-999999999`, "");
    writeFileSync(`${path}.tmp-${process.pid}`, "in progress");
    const { log, events } = capture();
    expect(loadJsonFile(path, { schema: fileSchema, log })).toEqual({ status: "ok", value: { points: [] } });
    expect(readdirSync(dir).sort()).toEqual(["index.json", `index.json.tmp-${process.pid}`]);
    expect(events().map((e) => [e.event, e.removed])).toEqual([["state.temp_removed", ["index.json.tmp-999999999"]]]);
  });

  it("setAsideDamaged refuses nothing and replaces nothing", () => {
    const path = join(dir, "jobs.json");
    writeFileSync(path, "x");
    const a = setAsideDamaged(path, { keepOriginal: true, now: NOW });
    const b = setAsideDamaged(path, { now: NOW });
    expect([a, b]).toEqual([`${path}.damaged-2026-11-23T10-41-07-123Z`, `${path}.damaged-2026-11-23T10-41-07-123Z-1`]);
    expect(existsSync(path)).toBe(false);
  });
});

describe("appends", () => {
  it("cut a torn tail back to the last newline before appending, so records are never glued", () => {
    const path = join(dir, "t.jsonl");
    writeFileSync(path, '{"x":1}\n{"x":2}\n{"x":');
    appendRecord(path, '{"x":3}\n');
    expect(readFileSync(path, "utf8")).toBe('{"x":1}\n{"x":2}\n{"x":3}\n');
    appendDurable(path, '{"x":4}\n');
    expect(readFileSync(path, "utf8")).toBe('{"x":1}\n{"x":2}\n{"x":3}\n{"x":4}\n');
  });

  it("cut a file with no newline at all to nothing", () => {
    const path = join(dir, "t.jsonl");
    writeFileSync(path, '{"x":');
    expect(cutTornTail(path)).toBe(5);
    appendRecord(path, '{"x":1}\n');
    expect(readFileSync(path, "utf8")).toBe('{"x":1}\n');
  });

  it("create the file owner-only", () => {
    const path = join(dir, "new.jsonl");
    appendDurable(path, "{}\n");
    expect(readFileSync(path, "utf8")).toBe("{}\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe("writeFileAtomic", () => {
  it("removes its temp file and leaves the old file intact when the write fails", () => {
    const path = join(dir, "index.json");
    writeFileSync(path, "old");
    // The temp file's name is predictable: make it a link to /dev/full, where every write fails with ENOSPC.
    symlinkSync("/dev/full", `${path}.tmp-${process.pid}`);
    let error: unknown;
    try {
      writeFileAtomic(path, "new".repeat(10_000));
    } catch (err) {
      error = err;
    }
    expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    expect(readdirSync(dir)).toEqual(["index.json"]);
    expect(readFileSync(path, "utf8")).toBe("old");
    expect(internalErrorText(error)).toBe(DISK_FULL_REPLY);
  });

  it("replaces the file", () => {
    const path = join(dir, "sub", "a.json");
    writeFileAtomic(path, "one");
    writeFileAtomic(path, "two");
    expect(readFileSync(path, "utf8")).toBe("two");
    expect(readdirSync(join(dir, "sub"))).toEqual(["a.json"]);
  });
});

describe("internalErrorText", () => {
  it("tells the user the disk is full for ENOSPC and EDQUOT, and something generic otherwise", () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(internalErrorText(err("ENOSPC"))).toBe("Hearth's disk is full; your message is kept and will be answered when there is space.");
    expect(internalErrorText(err("EDQUOT"))).toBe(DISK_FULL_REPLY);
    expect(internalErrorText(err("EIO"))).toBe("Something went wrong inside Hearth while answering. Please try again.");
  });
});
