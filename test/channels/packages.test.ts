// A channel's libraries that Hearth's install lacks come from the home's packages/ folder: the
// daemon's imports resolve there, and a missing one is named with the command that installs it.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installCommand, missingPackages, packageName, packagesDir } from "../../src/channels/packages.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "hearth-packages-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function fakePackage(name: string, body: string): void {
  const dir = path.join(packagesDir(home), "node_modules", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", type: "module", exports: "./index.js" }));
  writeFileSync(path.join(dir, "index.js"), body);
}

describe("channel packages", () => {
  it("an import Hearth cannot resolve is found in the home's packages/ once the daemon uses them", () => {
    fakePackage("hearth-fake-sdk", 'export const hello = "from the home";\n');
    const script = `
      import { usePackagesOf } from ${JSON.stringify(path.join(ROOT, "src/channels/packages.ts"))};
      let before = "not found";
      try { await import("hearth-fake-sdk"); before = "found"; } catch (e) { before = e.code; }
      usePackagesOf(${JSON.stringify(home)});
      const m = await import("hearth-fake-sdk");
      let other = "";
      try { await import("hearth-no-such-sdk"); } catch (e) { other = e.code; }
      console.log(JSON.stringify({ before, after: m.hello, other }));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ before: "ERR_MODULE_NOT_FOUND", after: "from the home", other: "ERR_MODULE_NOT_FOUND" });
  });

  it("names what neither Hearth nor the home has, and the command that installs it", () => {
    fakePackage("hearth-fake-sdk", "export {};\n");
    const d = { packages: ["zod@4.0.0", "hearth-fake-sdk@1.0.0", "@scope/hearth-absent@2.1.0"] };
    expect(missingPackages(home, d)).toEqual(["@scope/hearth-absent@2.1.0"]);
    expect(packageName("@scope/hearth-absent@2.1.0")).toBe("@scope/hearth-absent");
    expect(installCommand(home, ["@scope/hearth-absent@2.1.0"])).toBe(`npm install --prefix ${path.join(home, "packages")} --omit=dev --ignore-scripts @scope/hearth-absent@2.1.0`);
  });
});
