// A warm start strips no TypeScript: every source file, the first one the launcher imports
// included, comes from the compile cache, so Node's TypeScript stripper (a WebAssembly module,
// ~16 MB of the daemon's memory) is never loaded.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";

const REPORT = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\nLOADED "+JSON.stringify(process.moduleLoadList)))`;

/** The launcher's --version, with Node's list of its own modules loaded printed at exit. */
function versionRun(): { stdout: string; loaded: string[] } {
  const r = spawnSync(process.execPath, ["--import", REPORT, hearthBin, "--version"], { cwd: repoRoot, encoding: "utf8", timeout: 60_000 });
  return { stdout: r.stdout, loaded: loadedModules(r.stderr) };
}

/** The module list a REPORT-like hook printed last in `output` (the rest of its line). */
const loadedModules = (output: string): string[] => JSON.parse(output.slice(output.lastIndexOf("\nLOADED ") + "\nLOADED ".length).split("\n")[0]!) as string[];

describe("the compile cache", () => {
  it("a second run of the command loads no TypeScript stripper", () => {
    versionRun(); // fills the cache, as any run after the first finds it
    const warm = versionRun();
    expect(warm.stdout).toMatch(/^hearth \d+\.\d+\.\d+\n$/);
    expect(warm.loaded.filter((m) => /amaro/.test(m))).toEqual([]);
  });

  it("a daemon killed once it was ready leaves the cache warm: its restart strips no TypeScript either", async () => {
    // A launcher of its own, so that its cache (beside the launcher) starts empty.
    const dir = mkdtempSync(join(tmpdir(), "hearth-cc-"));
    mkdirSync(join(dir, "bin"));
    copyFileSync(hearthBin, join(dir, "bin", "hearth.js"));
    copyFileSync(join(repoRoot, "package.json"), join(dir, "package.json"));
    symlinkSync(join(repoRoot, "src"), join(dir, "src"));
    const bin = join(dir, "bin", "hearth.js");
    const home = makeHome({});
    const env = { ANTHROPIC_API_KEY: "test-key" };
    let daemon: Daemon | undefined;
    try {
      daemon = await startDaemon(home, env, { bin });
      // Written once it is ready, not at exit (a kill -9 has none).
      await waitFor("the compile cache written", () => daemon!.log().includes('"event":"gateway.compile_cache_written"'));
      daemon.proc.kill("SIGKILL");
      await daemon.exited;

      // Node's modules as the restarted daemon becomes ready, printed when it logs so.
      const atReady = join(dir, "at-ready.mjs");
      writeFileSync(
        atReady,
        `const write = process.stderr.write.bind(process.stderr);
        process.stderr.write = (chunk, ...rest) => {
          const r = write(chunk, ...rest);
          if (String(chunk).includes('"event":"gateway.ready"')) write("\\nLOADED " + JSON.stringify(process.moduleLoadList) + "\\n");
          return r;
        };`,
      );
      daemon = await startDaemon(home, env, { bin, nodeArgs: ["--import", pathToFileURL(atReady).href] });
      await waitFor("the module list at readiness", () => daemon!.log().includes("\nLOADED "));
      expect(loadedModules(daemon.log()).filter((m) => /amaro/.test(m))).toEqual([]);
      expect(await daemon.stop()).toBe(0);
    } finally {
      await cleanupDaemon(daemon, home);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
