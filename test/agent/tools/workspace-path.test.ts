import { closeSync, fstatSync, openSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { descriptorIsAt, resolveInWorkspace } from "../../../src/agent/tools/workspace-path.ts";

let base: string;
let workspace: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-wspath-")));
  workspace = path.join(base, "ws");
  outside = path.join(base, "outside");
  await mkdir(path.join(workspace, "notes"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(workspace, "notes", "a.md"), "a");
  await writeFile(path.join(outside, "secret.txt"), "secret");
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function expectRefused(requested: string, root = workspace): Promise<string> {
  const r = await resolveInWorkspace(root, requested);
  if (r.ok) throw new Error(`expected ${requested} to be refused, got ${r.path}`);
  expect(r.reason).toContain(JSON.stringify(requested));
  expect(r.reason).toContain("only reach files inside the workspace");
  return r.reason;
}

async function expectAllowed(requested: string, root = workspace): Promise<{ path: string; relative: string }> {
  const r = await resolveInWorkspace(root, requested);
  if (!r.ok) throw new Error(`expected ${requested} to be allowed: ${r.reason}`);
  return r;
}

describe("resolveInWorkspace", () => {
  it("refuses .. escapes", async () => {
    await expectRefused("../x");
    await expectRefused("a/../../x");
    await expectRefused("../outside/secret.txt");
    await expectRefused("..");
  });

  it("refuses an absolute path outside the workspace", async () => {
    await expectRefused("/etc/passwd");
    await expectRefused(path.join(outside, "secret.txt"));
  });

  it("refuses a symlinked file that points outside", async () => {
    await symlink(path.join(outside, "secret.txt"), path.join(workspace, "leak.txt"));
    const reason = await expectRefused("leak.txt");
    expect(reason).toContain("symlink");
  });

  it("refuses a symlinked directory that points outside, for existing and new files", async () => {
    await symlink(outside, path.join(workspace, "out"));
    await expectRefused("out");
    await expectRefused("out/secret.txt");
    await expectRefused("out/new.txt");
    await expectRefused("out/new/deeper/file.txt");
  });

  it("refuses a dangling symlink whose target would be created outside", async () => {
    await symlink(path.join(outside, "not-yet.txt"), path.join(workspace, "dangling.txt"));
    await expectRefused("dangling.txt");
  });

  it("refuses a symlink loop with a reason instead of throwing", async () => {
    await symlink(path.join(workspace, "loop-b"), path.join(workspace, "loop-a"));
    await symlink(path.join(workspace, "loop-a"), path.join(workspace, "loop-b"));
    const r = await resolveInWorkspace(workspace, "loop-a");
    expect(r.ok).toBe(false);
  });

  it("allows a normal relative path", async () => {
    const r = await expectAllowed("notes/a.md");
    expect(r.path).toBe(path.join(workspace, "notes", "a.md"));
    expect(r.relative).toBe(path.join("notes", "a.md"));
  });

  it("allows a new nested file and a path that goes up but stays inside", async () => {
    const r = await expectAllowed("new/deeper/file.md");
    expect(r.path).toBe(path.join(workspace, "new", "deeper", "file.md"));
    expect((await expectAllowed("notes/../notes/a.md")).relative).toBe(path.join("notes", "a.md"));
  });

  it("allows an absolute path inside the workspace", async () => {
    const r = await expectAllowed(path.join(workspace, "notes", "a.md"));
    expect(r.relative).toBe(path.join("notes", "a.md"));
  });

  it("allows symlinks that point inside the workspace, resolving to the target", async () => {
    await symlink(path.join(workspace, "notes"), path.join(workspace, "notes-link"));
    await symlink("notes/a.md", path.join(workspace, "a-link.md"));
    expect((await expectAllowed("notes-link/a.md")).path).toBe(path.join(workspace, "notes", "a.md"));
    expect((await expectAllowed("notes-link/new.md")).path).toBe(path.join(workspace, "notes", "new.md"));
    expect((await expectAllowed("a-link.md")).path).toBe(path.join(workspace, "notes", "a.md"));
  });

  it("works when the workspace itself is reached through a symlink", async () => {
    const linkedRoot = path.join(base, "ws-link");
    await symlink(workspace, linkedRoot);
    expect((await expectAllowed("notes/a.md", linkedRoot)).path).toBe(path.join(workspace, "notes", "a.md"));
    await expectAllowed(path.join(linkedRoot, "notes", "a.md"), linkedRoot);
    await expectAllowed(path.join(workspace, "notes", "a.md"), linkedRoot);
    await expectRefused("../outside/secret.txt", linkedRoot);
    await expectRefused(path.join(outside, "secret.txt"), linkedRoot);
  });

  it("does not mistake a sibling folder with the same prefix for the workspace", async () => {
    await mkdir(`${workspace}-other`);
    await expectRefused(path.join(`${workspace}-other`, "x"));
    await expectRefused("../ws-other/x");
  });

  it("allows names that merely start with two dots", async () => {
    expect((await expectAllowed("..notes")).relative).toBe("..notes");
  });
});

describe("descriptorIsAt", () => {
  const withOpen = <T>(p: string, fn: (fd: number) => T): T => {
    const fd = openSync(p, "r");
    try {
      return fn(fd);
    } finally {
      closeSync(fd);
    }
  };

  it("holds for a file opened at its real path", () => {
    const p = path.join(workspace, "notes", "a.md");
    expect(withOpen(p, (fd) => descriptorIsAt(fd, p, fstatSync(fd)))).toBe(true);
  });

  it("fails for a file reached through a linked folder, and for one moved after the open", async () => {
    await symlink(outside, path.join(workspace, "out"));
    const viaLink = path.join(workspace, "out", "secret.txt");
    expect(withOpen(viaLink, (fd) => descriptorIsAt(fd, viaLink, fstatSync(fd)))).toBe(false);

    const p = path.join(workspace, "notes", "a.md");
    expect(
      withOpen(p, (fd) => {
        renameSync(p, path.join(workspace, "notes", "b.md"));
        writeFileSync(p, "a new file at the old name");
        return descriptorIsAt(fd, p, fstatSync(fd));
      }),
    ).toBe(false);
  });
});
