import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "../support/cli-process.ts";
import { commandFor } from "../../src/process/hearth-command.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-cmd-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the command named in hints", () => {
  it("is `npx hearth` under npx, even when a hearth is on the PATH", () => {
    symlinkSync(hearthBin, join(dir, "hearth"));
    expect(commandFor({ env: { npm_lifecycle_event: "npx", PATH: dir }, cwd: "/" })).toBe("npx hearth");
  });

  it("is `hearth` when that name on the PATH is this Hearth (npm link)", () => {
    symlinkSync(hearthBin, join(dir, "hearth"));
    expect(commandFor({ env: { PATH: `/nonexistent:${dir}` }, cwd: "/" })).toBe("hearth");
  });

  it("is not `hearth` when the hearth on the PATH is another program", () => {
    writeFileSync(join(dir, "hearth"), "#!/bin/sh\n", { mode: 0o755 });
    expect(commandFor({ env: { PATH: dir }, cwd: repoRoot })).toBe("npx hearth");
  });

  it("is `npx hearth` in the project folder and the launcher's path elsewhere", () => {
    expect(commandFor({ env: { PATH: "" }, cwd: join(repoRoot, "src") })).toBe("npx hearth");
    expect(commandFor({ env: { PATH: "" }, cwd: dir })).toBe(`node ${hearthBin}`);
  });
});
