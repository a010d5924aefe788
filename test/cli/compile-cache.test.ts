// A warm start strips no TypeScript: every source file, the first one the launcher imports
// included, comes from the compile cache, so Node's TypeScript stripper (a WebAssembly module,
// ~16 MB of the daemon's memory) is never loaded.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "../support/cli-process.ts";

/** The launcher's --version, with Node's list of its own modules loaded printed at exit. */
function versionRun(): { stdout: string; loaded: string[] } {
  const report = `data:text/javascript,process.on("exit",()=>process.stderr.write(JSON.stringify(process.moduleLoadList)))`;
  const r = spawnSync(process.execPath, ["--import", report, hearthBin, "--version"], { cwd: repoRoot, encoding: "utf8", timeout: 60_000 });
  return { stdout: r.stdout, loaded: JSON.parse(r.stderr) as string[] };
}

describe("the compile cache", () => {
  it("a second run of the command loads no TypeScript stripper", () => {
    versionRun(); // fills the cache, as any run after the first finds it
    const warm = versionRun();
    expect(warm.stdout).toMatch(/^hearth \d+\.\d+\.\d+\n$/);
    expect(warm.loaded.filter((m) => /amaro/.test(m))).toEqual([]);
  });
});
