// `hearth backup` and `hearth memory` on the command line, in this process: usage errors exit 2
// before anything is opened, and create says when the workspace lies outside the home.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.ts";

let root: string;
let saved: string | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "hearth-clibk-"));
  saved = process.env.HEARTH_HOME;
  process.env.HEARTH_HOME = join(root, "home");
});
afterAll(() => {
  if (saved === undefined) delete process.env.HEARTH_HOME;
  else process.env.HEARTH_HOME = saved;
  rmSync(root, { recursive: true, force: true });
});

async function hearth(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = { code: 0, stdout: "", stderr: "" };
  const sink = (key: "stdout" | "stderr") => new Writable({ write: (c, _e, cb) => ((r[key] += String(c)), cb()) });
  r.code = await main(args, { stdin: process.stdin, stdout: sink("stdout"), stderr: sink("stderr") });
  return r;
}

describe("hearth backup and hearth memory on the command line", () => {
  const cases: Array<[string[], string]> = [
    [["backup"], "backup needs a subcommand: create, verify or restore."],
    [["backup", "copy"], 'Unknown backup subcommand "copy" (create, verify or restore).'],
    [["backup", "verify"], "backup verify takes one archive file."],
    [["backup", "restore", "a", "b"], "backup restore takes one archive file (got 2)."],
    [["backup", "create", "--zip"], "Unknown option '--zip'"],
    [["memory"], "memory needs a subcommand: log, diff or restore."],
    [["memory", "restore", "MEMORY.md"], "memory restore takes a FILE and --at REV."],
    [["memory", "log", "../config.json"], "../config.json: the memory history records the workspace's markdown files, by their path inside the workspace (e.g. MEMORY.md, memory/2026-11-25.md)."],
  ];
  for (const [args, message] of cases) {
    it(`hearth ${args.join(" ")}: exit 2 with the usage`, async () => {
      const r = await hearth(args);
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n\nUsage:\n")[0]).toBe(`hearth: ${message}`);
    });
  }

  it("create names a workspace outside the home, which it does not hold", async () => {
    const home = process.env.HEARTH_HOME!;
    mkdirSync(home);
    const elsewhere = join(root, "notes");
    mkdirSync(elsewhere);
    writeFileSync(join(home, "config.json"), JSON.stringify({ workspace: elsewhere }));
    const r = await hearth(["backup", "create", "--out", join(root, "b.tar.gz")]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(`Not in this backup: the workspace at ${elsewhere}, which is outside the home; back it up separately`);
  });

  it("an archive written inside the home holds neither itself nor its work folder", async () => {
    const home = process.env.HEARTH_HOME!;
    const out = join(home, "inside.tar.gz");
    const first = await hearth(["backup", "create", "--out", out]);
    expect(first.code).toBe(0);
    const again = await hearth(["backup", "create", "--out", join(home, "again.tar.gz")]);
    expect(again.stdout).not.toContain("staging");
    const verified = await hearth(["backup", "verify", join(home, "again.tar.gz")]);
    expect(verified.code).toBe(0);
    const list = await hearth(["backup", "restore", join(home, "again.tar.gz"), "--home", join(root, "copy")]);
    expect(list.code).toBe(0);
    expect(readdirSync(join(root, "copy")).sort()).toEqual(["config.json", "inside.tar.gz"]);
  });

  it("memory log before any history says so", async () => {
    const r = await hearth(["memory", "log"]);
    expect(r).toEqual({ code: 1, stdout: "", stderr: "hearth: no memory history yet: it starts when Hearth first runs on this home.\n" });
  });
});
