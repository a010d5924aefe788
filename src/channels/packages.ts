// The libraries a chat platform needs beyond Hearth's own (Slack's, Matrix's, mail's) are not
// part of Hearth's install: most owners use two channels, and every platform's SDK together would
// weigh more than the rest of Hearth. A descriptor names its packages at exact versions (the
// same as Hearth's devDependencies, so the suite tests what owners run); `hearth setup` installs
// them into the home's `packages/` folder when the owner connects the platform, and the daemon
// resolves an import Hearth's own folder cannot satisfy from there. An upgrade of Hearth keeps
// them; a backup leaves them out (the line says how to put them back).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire, registerHooks } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { ChannelDescriptor } from "./descriptor.ts";

/** The home's folder of channel libraries. */
export const packagesDir = (home: string): string => path.join(home, "packages");

/** "@slack/bolt@5.1.0" → "@slack/bolt". */
export const packageName = (spec: string): string => spec.slice(0, spec.lastIndexOf("@") > 0 ? spec.lastIndexOf("@") : spec.length);

/** The home whose packages resolve (the latest `usePackagesOf`); the hook is registered once. */
let current: { dir: string; require: NodeJS.Require } | undefined;

/**
 * From now on, a bare import that Hearth's own folder cannot resolve is looked up in the home's
 * `packages/` folder (this home's: a later call moves it, as a test's second gateway does).
 */
export function usePackagesOf(home: string): void {
  const dir = packagesDir(home);
  const first = current === undefined;
  current = { dir, require: createRequire(path.join(dir, "package.json")) };
  if (!first) return;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      try {
        return nextResolve(specifier, context);
      } catch (err) {
        const bare = !specifier.startsWith(".") && !specifier.startsWith("/") && !specifier.includes(":");
        if (!bare || (err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND" || !current || !existsSync(current.dir)) throw err;
        let found: string;
        try {
          found = current.require.resolve(specifier);
        } catch {
          throw err;
        }
        return nextResolve(pathToFileURL(found).href, context);
      }
    },
  });
}

/** The packages of `d` that neither Hearth's folder nor the home's `packages/` has. */
export function missingPackages(home: string, d: Pick<ChannelDescriptor, "packages">): string[] {
  const fromHearth = createRequire(import.meta.url);
  const fromHome = createRequire(path.join(packagesDir(home), "package.json"));
  // By the folder, not by resolving: a package's exports may hide both package.json and a require entry.
  const present = (name: string) => [fromHearth, fromHome].some((r) => (r.resolve.paths(name) ?? []).some((dir) => existsSync(path.join(dir, name, "package.json"))));
  return (d.packages ?? []).filter((spec) => !present(packageName(spec)));
}

/** The command that installs `specs` into the home's `packages/` folder (for messages). */
export function installCommand(home: string, specs: string[]): string {
  return `npm install --prefix ${packagesDir(home)} --omit=dev --ignore-scripts ${specs.join(" ")}`;
}

/** Installs `specs` into the home's `packages/` folder with npm (from the registry); resolves with npm's exit code and output. */
export async function installPackages(home: string, specs: string[], npm = "npm"): Promise<{ code: number; output: string }> {
  const dir = packagesDir(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const manifest = path.join(dir, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: "hearth-channel-packages", private: true }, null, 2)}\n`, { mode: 0o600 });
  const child = spawn(npm, ["install", "--prefix", dir, "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--save-exact", ...specs], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number>((resolve) => {
    child.on("error", (err) => {
      output += `${err.message}\n`;
      resolve(127);
    });
    child.on("close", (c) => resolve(c ?? 1));
  });
  return { code, output };
}
