import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger, type Logger } from "../../src/process/log.ts";
import { cutText, ProblemLog, readWorkspaceFile, stripOwnerComment, truncationMarker, type CappedRead, type ReadCapOptions } from "../../src/memory/workspace-files.ts";

let dir: string;
let lines: string[];
let log: Logger;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "hearth-wsfiles-")));
  lines = [];
  log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const file = (name: string, content: string | Buffer) => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
};
const ok = (r: CappedRead) => {
  if (r.type !== "ok") throw new Error(`expected ok, got ${JSON.stringify(r)}`);
  return r;
};
/** Reads the file at `abs` (inside `dir`, the workspace) as the main scope. */
const readCapped = (abs: string, opts: ReadCapOptions, l: Logger | ProblemLog) => readWorkspaceFile(dir, path.relative(dir, abs), { kind: "main" }, opts, l);
const problems = () => lines.map((l) => JSON.parse(l) as { event: string; reason: string }).filter((l) => l.event === "memory.file_problem");

describe("readWorkspaceFile", () => {
  it("returns a small file whole, without its leading owner comment", () => {
    const p = file("SOUL.md", "<!-- for the owner:\nnot the model -->\n# Soul\n\nBe kind.\n");
    expect(ok(readCapped(p, { maxChars: 1000, keep: "head" }, log))).toEqual({ type: "ok", text: "# Soul\n\nBe kind.\n", truncated: false, omittedChars: 0, estimated: false });
  });

  it("keeps a later comment, and an unclosed leading one", () => {
    expect(stripOwnerComment("# A\n<!-- x -->\n")).toBe("# A\n<!-- x -->\n");
    expect(stripOwnerComment("<!-- never closed\n# A")).toBe("<!-- never closed\n# A");
    expect(stripOwnerComment("\n  <!-- x -->  \n\n# A")).toBe("# A");
  });

  it("reports a missing file as missing, without logging", () => {
    expect(readCapped(path.join(dir, "nope.md"), { maxChars: 10, keep: "head" }, log)).toEqual({ type: "missing" });
    expect(readCapped(path.join(dir, "nope", "deeper.md"), { maxChars: 10, keep: "head" }, log)).toEqual({ type: "missing" });
    expect(lines).toEqual([]);
  });

  it("keeps the head of a long note and the tail of a long log, cut at line breaks", () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, "0")}`).join("\n");
    const p = file("long.md", text);
    const head = ok(readCapped(p, { maxChars: 100, keep: "head" }, log));
    expect(head.text.startsWith("line 0000\nline 0001")).toBe(true);
    expect(head.text.length).toBeLessThanOrEqual(100);
    expect(head.text.endsWith("\n")).toBe(false);
    expect(head.text.split("\n").every((l) => /^line \d{4}$/.test(l))).toBe(true);
    expect(head.truncated).toBe(true);

    const tail = ok(readCapped(p, { maxChars: 100, keep: "tail" }, log));
    expect(tail.text.endsWith("line 0999")).toBe(true);
    expect(tail.text.length).toBeLessThanOrEqual(100);
    expect(tail.text.split("\n").every((l) => /^line \d{4}$/.test(l))).toBe(true);
  });

  it("counts omitted characters exactly when the whole file was read", () => {
    const p = file("a.md", "x".repeat(250));
    const r = ok(readCapped(p, { maxChars: 100, keep: "head" }, log));
    expect(r).toMatchObject({ truncated: true, omittedChars: 150, estimated: false });
    expect(r.text).toBe("x".repeat(100));
  });

  it("reads only a window of a 50 MB file and estimates what it left out", () => {
    const size = 50 * 1024 * 1024;
    const buf = Buffer.alloc(size, "a");
    buf.write("FIRST", 0);
    buf.write("LAST\n", size - 5);
    const p = file("huge.md", buf);
    const head = ok(readCapped(p, { maxChars: 20_000, keep: "head" }, log));
    expect(head.text.startsWith("FIRST")).toBe(true);
    expect(head.text.length).toBe(20_000);
    expect(head).toMatchObject({ truncated: true, estimated: true });
    expect(head.omittedChars).toBe(size - 20_000);
    const tail = ok(readCapped(p, { maxChars: 20_000, keep: "tail" }, log));
    expect(tail.text.endsWith("LAST\n")).toBe(true);
    expect(tail.text.length).toBe(20_000);
  });

  it("never splits a multi-byte character at either edge", () => {
    // 3-byte and 4-byte characters, so the byte window starts and ends inside characters.
    const unit = "日本語🙂";
    const p = file("mb.md", unit.repeat(20_000));
    for (const keep of ["head", "tail"] as const) {
      for (const maxChars of [99, 100, 101, 1000]) {
        const r = ok(readCapped(p, { maxChars, keep }, log));
        expect(r.text).not.toContain("\uFFFD");
        expect(r.text.length).toBeLessThanOrEqual(maxChars);
        expect(r.text.length).toBeGreaterThan(maxChars - 3);
        // No lone surrogate: encoding round-trips.
        expect(Buffer.from(r.text, "utf8").toString("utf8")).toBe(r.text);
        expect(r.text.isWellFormed()).toBe(true);
      }
    }
    expect(problems()).toEqual([]);
  });

  it("decodes invalid UTF-8 with replacement characters and logs it once per file version", () => {
    const p = file("latin1.md", Buffer.from("Caf\xe9 cr\xe8me\n", "latin1"));
    for (let i = 0; i < 3; i++) expect(ok(readCapped(p, { maxChars: 100, keep: "head" }, log)).text).toBe("Caf\uFFFD cr\uFFFDme\n");
    expect(problems().map((l) => l.reason)).toEqual(["not valid UTF-8 (shown with replacement characters)"]);
    utimesSync(p, new Date(), new Date(Date.now() + 10_000));
    readCapped(p, { maxChars: 100, keep: "head" }, log);
    expect(problems()).toHaveLength(2);
  });

  it("reports a directory, a socket and a FIFO as unreadable without hanging, each logged once", async () => {
    mkdirSync(path.join(dir, "USER.md"));
    const sock = path.join(dir, "sock.md");
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    const fifo = path.join(dir, "fifo.md");
    execFileSync("mkfifo", [fifo]);
    try {
      const plog = new ProblemLog(log);
      for (let i = 0; i < 3; i++) {
        expect(readCapped(path.join(dir, "USER.md"), { maxChars: 10, keep: "head" }, plog)).toEqual({ type: "unreadable", reason: "not a regular file (directory)" });
        expect(readCapped(sock, { maxChars: 10, keep: "head" }, plog)).toMatchObject({ type: "unreadable", reason: expect.stringContaining("socket") });
        expect(readCapped(fifo, { maxChars: 10, keep: "head" }, plog)).toEqual({ type: "unreadable", reason: "not a regular file (FIFO)" });
      }
      expect(problems()).toHaveLength(3);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // Root reads a mode-000 file anyway, so there is no permission error to provoke when the
  // suite runs as root (as it does on the CI machines); it runs everywhere else.
  it.skipIf(process.getuid?.() === 0)("reports a file without read permission as unreadable", () => {
    const p = file("secret.md", "x");
    execFileSync("chmod", ["000", p]);
    expect(readCapped(p, { maxChars: 10, keep: "head" }, log)).toEqual({ type: "unreadable", reason: "permission denied" });
  });
});

describe("cutText and truncationMarker", () => {
  it("does not split a surrogate pair when no line break is near", () => {
    expect(cutText("ab🙂cd", 3, "head")).toEqual({ text: "ab", omitted: 4 });
    expect(cutText("ab🙂cd", 3, "tail")).toEqual({ text: "cd", omitted: 4 });
  });

  it("says how much is missing, and whether that is an estimate", () => {
    expect(truncationMarker(12345, false)).toBe("[… truncated: 12,345 characters not shown; use memory_get to read more]");
    expect(truncationMarker(52_000_000, true)).toBe("[… truncated: about 52,000,000 characters not shown; use memory_get to read more]");
  });
});
