import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/agent/tool.ts";
import { editTool, readLineWindow, readTool, writeTool } from "../../../src/agent/tools/files.ts";
import { createWorkspaceTools } from "../../../src/agent/tools/index.ts";
import { silentLogger } from "../../../src/process/log.ts";

let base: string;
let workspace: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-files-")));
  workspace = path.join(base, "ws");
  outside = path.join(base, "outside");
  await mkdir(workspace);
  await mkdir(outside);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const ctx = (): ToolContext => ({
  signal: new AbortController().signal,
  workspace,
  scope: "main",
  sessionKey: "main",
  log: silentLogger,
});

const inWs = (...parts: string[]) => path.join(workspace, ...parts);
const read = (input: { path: string; offset?: number; limit?: number }) => readTool.execute(input, ctx());
const write = (input: { path: string; content: string }) => writeTool.execute(input, ctx());
const edit = (input: { path: string; old_text: string; new_text: string; replace_all?: boolean }) =>
  editTool.execute(input, ctx());

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

describe("createWorkspaceTools", () => {
  it("returns exec, read, write and edit in that order", () => {
    expect(createWorkspaceTools({ execTimeoutMs: 120_000 }).map((t) => t.name)).toEqual(["exec", "read", "write", "edit"]);
  });
});

describe("read", () => {
  it("prefixes lines with right-aligned numbers and a tab", async () => {
    await writeFile(inWs("a.txt"), "alpha\nbeta\n");
    const out = await read({ path: "a.txt" });
    expect(out.isError).toBeFalsy();
    expect(out.content).toBe("     1\talpha\n     2\tbeta");
  });

  it("reads a window with offset and limit and notes the lines that remain", async () => {
    await writeFile(inWs("n.txt"), numbered(50));
    const out = await read({ path: "n.txt", offset: 10, limit: 3 });
    expect(out.content).toBe("    10\tline 10\n    11\tline 11\n    12\tline 12\n[lines 10-12 of 50; use offset to read more]");
  });

  it("stops at 2000 lines by default with a note", async () => {
    await writeFile(inWs("big.txt"), numbered(5231));
    const out = await read({ path: "big.txt" });
    const lines = out.content.split("\n");
    expect(lines).toHaveLength(2001);
    expect(lines[1999]).toBe("  2000\tline 2000");
    expect(lines[2000]).toBe("[lines 1-2000 of 5231; use offset to read more]");
  });

  it("adds no note when the window reaches the end", async () => {
    await writeFile(inWs("n.txt"), numbered(5));
    const out = await read({ path: "n.txt", offset: 4 });
    expect(out.content).toBe("     4\tline 4\n     5\tline 5");
  });

  it("refuses an offset past the end", async () => {
    await writeFile(inWs("n.txt"), numbered(5));
    const out = await read({ path: "n.txt", offset: 9 });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("5 lines");
  });

  it("cuts very long lines with a marker", async () => {
    await writeFile(inWs("long.txt"), `${"x".repeat(5000)}\nshort\n`);
    const out = await read({ path: "long.txt" });
    const [first, second] = out.content.split("\n");
    expect(first).toBe(`     1\t${"x".repeat(2000)} [... line cut: 5000 chars]`);
    expect(second).toBe("     2\tshort");
  });

  it("reports a missing file", async () => {
    const out = await read({ path: "nope.md" });
    expect(out.isError).toBe(true);
    expect(out.content).toBe('File not found: "nope.md".');
  });

  it("refuses a directory", async () => {
    await mkdir(inWs("dir"));
    const out = await read({ path: "dir" });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("is a directory");
  });

  it("refuses binary files: NUL bytes or invalid UTF-8", async () => {
    await writeFile(inWs("nul.bin"), Buffer.from([0x68, 0x69, 0x00, 0x0a]));
    await writeFile(inWs("latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    for (const p of ["nul.bin", "latin1.txt"]) {
      const out = await read({ path: p });
      expect(out.isError).toBe(true);
      expect(out.content).toContain("binary");
    }
  });

  it("reads UTF-8 text with multibyte characters", async () => {
    await writeFile(inWs("u.txt"), "café ☕\n");
    expect((await read({ path: "u.txt" })).content).toBe("     1\tcafé ☕");
  });

  it("refuses paths outside the workspace, directly or through a symlink", async () => {
    await writeFile(path.join(outside, "secret.txt"), "top secret");
    await symlink(path.join(outside, "secret.txt"), inWs("leak.txt"));
    for (const p of ["../outside/secret.txt", path.join(outside, "secret.txt"), "leak.txt"]) {
      const out = await read({ path: p });
      expect(out.isError).toBe(true);
      expect(out.content).toContain("only reach files inside the workspace");
      expect(out.content).not.toContain("top secret");
    }
  });
});

describe("write", () => {
  it("creates a file in new nested folders", async () => {
    const out = await write({ path: "notes/2025/today.md", content: "hello ☕\n" });
    expect(out.isError).toBeFalsy();
    expect(out.content).toBe(`Created ${path.join("notes", "2025", "today.md")} (10 bytes written).`);
    expect(await readFile(inWs("notes", "2025", "today.md"), "utf8")).toBe("hello ☕\n");
  });

  it("replaces existing content, keeps the file mode and leaves no temp file", async () => {
    await writeFile(inWs("run.sh"), "old content that is longer\n");
    await chmod(inWs("run.sh"), 0o755);
    const out = await write({ path: "run.sh", content: "new\n" });
    expect(out.content).toBe("Replaced run.sh (4 bytes written).");
    expect(await readFile(inWs("run.sh"), "utf8")).toBe("new\n");
    expect((await stat(inWs("run.sh"))).mode & 0o777).toBe(0o755);
    expect(await readdir(workspace)).toEqual(["run.sh"]);
  });

  it("refuses to write onto a directory", async () => {
    await mkdir(inWs("dir"));
    const out = await write({ path: "dir", content: "x" });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("is a directory");
    expect((await stat(inWs("dir"))).isDirectory()).toBe(true);
  });

  it("reports a parent that is a file", async () => {
    await writeFile(inWs("plain"), "x");
    const out = await write({ path: "plain/child.txt", content: "x" });
    expect(out.isError).toBe(true);
    expect(out.content).toBe('A parent of "plain/child.txt" is a file, not a folder.');
  });

  it("refuses escapes and writes nothing outside", async () => {
    await symlink(outside, inWs("out"));
    for (const p of ["../outside/a.txt", path.join(outside, "b.txt"), "out/c.txt", "out/new/d.txt"]) {
      const out = await write({ path: p, content: "pwned" });
      expect(out.isError).toBe(true);
      expect(out.content).toContain("only reach files inside the workspace");
    }
    expect(await readdir(outside)).toEqual([]);
  });

  it("writes through a symlink that points inside the workspace", async () => {
    await mkdir(inWs("real"));
    await writeFile(inWs("real", "f.txt"), "old");
    await symlink(inWs("real", "f.txt"), inWs("f-link.txt"));
    await write({ path: "f-link.txt", content: "new" });
    expect(await readFile(inWs("real", "f.txt"), "utf8")).toBe("new");
  });
});

describe("edit", () => {
  beforeEach(async () => {
    await writeFile(inWs("doc.md"), "# Title\n\nfoo bar\n  indented line\nfoo again\n");
  });

  it("replaces a single occurrence", async () => {
    const out = await edit({ path: "doc.md", old_text: "bar", new_text: "baz $& $1" });
    expect(out.isError).toBeFalsy();
    expect(out.content).toBe("Edited doc.md: 1 replacement.");
    expect(await readFile(inWs("doc.md"), "utf8")).toBe("# Title\n\nfoo baz $& $1\n  indented line\nfoo again\n");
    expect(await readdir(workspace)).toEqual(["doc.md"]);
  });

  it("reports text that is not found, and hints at whitespace differences", async () => {
    const missing = await edit({ path: "doc.md", old_text: "nothing like this", new_text: "x" });
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain("not found");
    expect(missing.content).not.toContain("whitespace is ignored");

    const spaced = await edit({ path: "doc.md", old_text: "foo bar\nindented line", new_text: "x" });
    expect(spaced.isError).toBe(true);
    expect(spaced.content).toContain("not found");
    expect(spaced.content).toContain("whitespace is ignored");
    expect(await readFile(inWs("doc.md"), "utf8")).toContain("foo bar\n  indented line");
  });

  it("refuses several occurrences without replace_all, naming the count", async () => {
    const out = await edit({ path: "doc.md", old_text: "foo", new_text: "qux" });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("2 times");
    expect(out.content).toContain("replace_all");
    expect(await readFile(inWs("doc.md"), "utf8")).toContain("foo bar");
  });

  it("replaces every occurrence with replace_all", async () => {
    const out = await edit({ path: "doc.md", old_text: "foo", new_text: "qux", replace_all: true });
    expect(out.content).toBe("Edited doc.md: 2 replacements.");
    expect(await readFile(inWs("doc.md"), "utf8")).toBe("# Title\n\nqux bar\n  indented line\nqux again\n");
  });

  it("refuses an empty old_text", async () => {
    const out = await edit({ path: "doc.md", old_text: "", new_text: "x" });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("old_text is empty");
  });

  it("matches multi-line text in a file with CRLF line ends", async () => {
    await writeFile(inWs("win.txt"), "one\r\ntwo\r\nthree\r\n");
    const out = await edit({ path: "win.txt", old_text: "one\ntwo", new_text: "1\n2" });
    expect(out.isError).toBeFalsy();
    expect(await readFile(inWs("win.txt"), "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });

  it("reports a missing file", async () => {
    const out = await edit({ path: "nope.md", old_text: "a", new_text: "b" });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("File not found");
  });

  it("refuses escapes and leaves outside files untouched", async () => {
    await writeFile(path.join(outside, "secret.txt"), "foo");
    await symlink(path.join(outside, "secret.txt"), inWs("leak.txt"));
    for (const p of ["../outside/secret.txt", "leak.txt"]) {
      const out = await edit({ path: p, old_text: "foo", new_text: "pwned" });
      expect(out.isError).toBe(true);
      expect(out.content).toContain("only reach files inside the workspace");
    }
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("foo");
  });
});

describe("readLineWindow: a link swapped in after the path was resolved", () => {
  // readLineWindow gets the real path resolveInWorkspace returned; these calls stand for the
  // moment right after resolving, when a program replaced the file or a folder with a link.
  it("refuses a file that became a symlink, and a folder on its path that became one", async () => {
    await writeFile(path.join(outside, "secret.txt"), "token=CMARK-1\n");
    await symlink(path.join(outside, "secret.txt"), inWs("notes.txt"));
    const file = await readLineWindow(inWs("notes.txt"), { shown: "notes.txt" });
    expect(file).toEqual({ content: 'Refused "notes.txt": it changed into a link while it was being opened. Try again once it is a plain file.', isError: true });

    await symlink(outside, inWs("docs"));
    const folder = await readLineWindow(inWs("docs", "secret.txt"), { shown: "docs/secret.txt" });
    expect(folder).toEqual({ content: 'Refused "docs/secret.txt": it changed into a link while it was being opened. Try again once it is a plain file.', isError: true });
  });

  it("still reads a plain file at its real path", async () => {
    await writeFile(inWs("plain.txt"), "one\ntwo\n");
    expect(await readLineWindow(inWs("plain.txt"), { shown: "plain.txt" })).toEqual({ content: "     1\tone\n     2\ttwo" });
  });
});
