// Which Node the user needs: the README, package.json's engines and what really runs agree.
// The launcher (bin/hearth.js) runs Hearth on the Node 24 of the `node` devDependency when the
// system Node is older than 22.18, so an older system Node is enough to start it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "./support/cli-process.ts";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { engines: { node: string }; version: string };
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

describe("the Node version Hearth needs", () => {
  it("the README states the minimum package.json's engines declare", () => {
    const minimum = /^>=(\d+)$/.exec(pkg.engines.node)?.[1];
    expect(minimum).toBeDefined();
    expect(readme).toContain(`You need Node.js ${minimum} or newer with npm.`);
  });

  // The system Node of these machines (and of CI) is 20; a machine without one skips this.
  const systemNode = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p));
  it.skipIf(!systemNode)("the system Node, whatever its version at or above the minimum, runs hearth", () => {
    const version = spawnSync(systemNode!, ["--version"], { encoding: "utf8" }).stdout.trim();
    const major = Number(/^v(\d+)/.exec(version)?.[1]);
    expect(major).toBeGreaterThanOrEqual(Number(/^>=(\d+)$/.exec(pkg.engines.node)![1]));
    const r = spawnSync(systemNode!, [hearthBin, "--version"], { cwd: repoRoot, encoding: "utf8", timeout: 60_000 });
    expect({ code: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: `hearth ${pkg.version}\n`, stderr: "" });
  });
});
