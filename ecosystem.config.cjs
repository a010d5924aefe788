// pm2 runs Hearth with this file:  npx pm2 start ecosystem.config.cjs
// It uses the Node 24 that `npm install` put in node_modules, the daemon's V8 flags from
// package.json, and the home from HEARTH_HOME (default ~/.hearth), whose logs/ gets the log files.
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { parse } = require("jsonc-parser");
const pkg = require("./package.json");

const home = path.resolve((process.env.HEARTH_HOME || "~/.hearth").replace(/^~(?=$|\/)/, os.homedir()));
fs.mkdirSync(path.join(home, "logs"), { recursive: true, mode: 0o700 });

/** agent.shutdownGraceMs from config.json (default 10 s): pm2 must wait longer than that. */
function shutdownGraceMs() {
  try {
    const config = parse(fs.readFileSync(path.join(home, "config.json"), "utf8"), [], { allowTrailingComma: true });
    const grace = config && config.agent && config.agent.shutdownGraceMs;
    return Number.isInteger(grace) && grace >= 0 ? grace : 10_000;
  } catch {
    return 10_000;
  }
}

module.exports = {
  apps: [
    {
      name: "hearth",
      script: path.join(__dirname, "bin", "hearth.js"),
      args: "start",
      cwd: __dirname,
      interpreter: path.join(__dirname, "node_modules", "node", "bin", "node"),
      node_args: (pkg.config.daemonNodeArgs || "").split(/\s+/).filter(Boolean),
      // package.json's config.daemonEnv: glibc's allocator settings (src/process/daemon-env.ts says why).
      env: { HEARTH_HOME: home, ...pkg.config.daemonEnv },
      // Hearth says "ready" once its channels are up; a slow platform is waited for 5 s at most.
      wait_ready: true,
      listen_timeout: 15_000,
      // `pm2 stop` sends SIGINT: running answers get shutdownGraceMs, then the daemon exits.
      kill_timeout: shutdownGraceMs() + 5_000,
      max_memory_restart: "400M",
      // Exit code 2 is a configuration error (no key, a bad config.json): restarting cannot fix
      // it, so pm2 stops and the error log says what to change.
      stop_exit_codes: [2],
      exp_backoff_restart_delay: 200,
      out_file: path.join(home, "logs", "hearth.out.log"),
      error_file: path.join(home, "logs", "hearth.err.log"),
      merge_logs: true,
      // No pm2 metrics agent inside the daemon: it would cost memory, and after Hearth closes the
      // IPC channel at shutdown its next report calls process.exit(1) ("Process disconnected
      // from parent"), which turns a clean stop into a failed one.
      pmx: false,
    },
  ],
};
