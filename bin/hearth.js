#!/usr/bin/env node
// Launcher for the `hearth` command. Hearth runs its TypeScript sources directly, which needs
// Node's type stripping (22.18+). When started by an older system Node, re-run the same
// command on the Node 24 binary that the `node` devDependency installs, as a child that lives
// and dies with this process.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import module, { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);
const canStripTypes = major > 22 || (major === 22 && minor >= 18);
const args = process.argv.slice(2);
const script = fileURLToPath(import.meta.url);
// The daemon's V8 flags and allocator settings (package.json config.daemonNodeArgs and
// config.daemonEnv, src/process/daemon-env.ts) belong to the process that runs it.
const config = args[0] === "start" ? daemonConfig() : {};
const nodeArgs = (config.daemonNodeArgs ?? "").split(/\s+/).filter(Boolean);
const envMissing = Object.entries(config.daemonEnv ?? {}).filter(([k]) => process.env[k] === undefined);
const withDaemonEnv = () => ({ ...process.env, ...Object.fromEntries(envMissing) });

if (canStripTypes) {
  const missing = nodeArgs.filter((a) => !process.execArgv.includes(a));
  // Started without them (`npm start`, `npx hearth start`, `node bin/hearth.js start`): become,
  // in place, the same command with them (glibc reads its settings only as a process starts).
  // Same pid, so whoever started it still holds the daemon. Not with an IPC channel (pm2),
  // which would not survive: pm2 passes them itself.
  if ((missing.length > 0 || envMissing.length > 0) && typeof process.execve === "function" && !process.channel) {
    process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, script, ...args], withDaemonEnv());
  }
  // Cache compiled (and type-stripped) modules: a warm start skips the TypeScript stripper,
  // which halves start-up time and saves ~16 MB of memory. Before the first .ts import: one
  // file stripped outside the cache loads the stripper for the life of the process. The cache
  // is only a cache.
  module.enableCompileCache?.(fileURLToPath(new URL("../node_modules/.cache/hearth-compile", import.meta.url)));
  // Then, before the heavy imports: from here on a stop signal is a clean shutdown.
  const stop = await import(new URL("../src/process/stop.ts", import.meta.url).href);
  if (args[0] === "start") stop.catchStopRequests();
  else if (stop.launchedByLauncher()) stop.watchLauncher(process, () => process.exit(129));
  const { run } = await import(new URL("../src/cli.ts", import.meta.url).href);
  process.exitCode = await run(args);
} else {
  launchChild();
}

/**
 * Runs this command on the bundled Node 24. The child gets an IPC channel: when this process
 * ends, even by kill -9, the channel closes and the child shuts down (src/process/stop.ts).
 * Stop signals are passed on once the child says it handles them; its exit status is ours.
 */
function launchChild() {
  const bundled = bundledNode();
  if (!bundled) {
    process.stderr.write(
      `hearth needs Node 22.18 or newer (this is ${process.version}). Run \`npm install\` in the ` +
        `Hearth folder to get Node 24, or install Node 24 yourself.\n`,
    );
    process.exit(2);
  }
  const child = spawn(bundled, [...nodeArgs, script, ...args], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    env: { ...withDaemonEnv(), HEARTH_LAUNCHED_BY: String(process.pid) },
  });
  let caught = false;
  const held = [];
  const pass = (signal) => {
    if (caught) child.kill(signal);
    else held.push(signal);
  };
  // A terminal sends Ctrl+C (SIGINT) and its hang-up (SIGHUP) to the child as well: passing
  // them on would make one Ctrl+C two.
  const fromTerminal = process.stdin.isTTY ? ["SIGINT", "SIGHUP"] : [];
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => (fromTerminal.includes(signal) ? undefined : pass(signal)));
  }
  child.on("message", (message) => {
    if (message && typeof message === "object" && message.hearth === "signals-caught") {
      caught = true;
      held.splice(0).forEach((signal) => child.kill(signal));
    } else {
      // pm2 (or another supervisor) talks to the daemon: "ready" goes up, its messages down.
      process.send?.(message, undefined, {}, () => {});
    }
  });
  process.on("message", (message) => child.connected && child.send(message, undefined, {}, () => {}));
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}

/** package.json's config: the daemon's node arguments and environment. */
function daemonConfig() {
  return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).config ?? {};
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
