#!/usr/bin/env node
// Launcher for the `hearth` command. Hearth runs its TypeScript sources directly, which needs
// Node's type stripping (22.18+). When started by an older system Node, re-run the same
// command on the Node 24 binary that the `node` devDependency installs.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import module, { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);
const canStripTypes = major > 22 || (major === 22 && minor >= 18);

if (canStripTypes) {
  // Cache compiled (and type-stripped) modules: a warm start skips the TypeScript stripper,
  // which halves start-up time and saves ~20 MB of memory. The cache is only a cache.
  module.enableCompileCache?.(fileURLToPath(new URL("../node_modules/.cache/hearth-compile", import.meta.url)));
  const { run } = await import(new URL("../src/cli.ts", import.meta.url).href);
  process.exitCode = await run(process.argv.slice(2));
} else {
  const bundled = bundledNode();
  if (!bundled) {
    process.stderr.write(
      `hearth needs Node 22.18 or newer (this is ${process.version}). Run \`npm install\` in the ` +
        `Hearth folder to get Node 24, or install Node 24 yourself.\n`,
    );
    process.exit(2);
  }
  const child = spawn(bundled, [fileURLToPath(new URL("../src/cli.ts", import.meta.url)), ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

function bundledNode() {
  try {
    const require = createRequire(import.meta.url);
    const path = fileURLToPath(new URL("bin/node", `file://${require.resolve("node/package.json")}`));
    return existsSync(path) ? path : null;
  } catch {
    return null;
  }
}
