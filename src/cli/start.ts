// `hearth start`: the daemon in the foreground (pm2 runs this). A stop request — SIGTERM, SIGINT,
// SIGHUP, or the end of the launcher that spawned it — at any moment shuts it down once and
// cleanly: start-up stops at its next step, or intake stops, active runs get
// `agent.shutdownGraceMs`, then everything closes and the process exits 0. A second signal
// while stopping exits at once (1).
import module from "node:module";
import path from "node:path";
import { assertModelCredentials } from "../config/credentials.ts";
import { loadConfig } from "../config/config.ts";
import { assertHomePrivate } from "../config/home-modes.ts";
import { migrateConfigFile } from "../config/migrations.ts";
import { applySecrets } from "../config/secrets.ts";
import { startGateway, StartupStopped, type Gateway } from "../gateway/gateway.ts";
import { gatewayOptions } from "../gateway/setup.ts";
import type { GatewayStatus } from "../gateway/status.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { daemonLogger, LogTail, parseLevel, underPm2, type Logger } from "../process/log.ts";
import { catchStopRequests, describeStop } from "../process/stop.ts";
import { ownSupervisor, recordSupervisor } from "./supervisor.ts";

export async function runStart(home: string, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  // Caught already by bin/hearth.js; a request made since is replayed to the listener below.
  const stop = catchStopRequests();
  // pm2 or systemd starting Hearth for this home has it from now on, even if this start fails:
  // `hearth restart` goes through it after the fix (cli/supervisor.ts).
  recordSupervisor(home, ownSupervisor());
  // An older config.json is migrated in place (one log line per step), once it is known to be
  // valid: a file with a mistake is reported as it is, untouched.
  loadConfig({ home });
  // Keys others may read are refused before anything reads them into the daemon (exit 2).
  assertHomePrivate(home);
  // Also into <home>/logs, where `hearth logs` reads it, however the daemon was started.
  const logsDir = path.join(home, "logs");
  migrateConfigFile(home, daemonLogger(parseLevel(process.env.HEARTH_LOG, "info"), undefined, logsDir));
  applySecrets(home);
  const config = loadConfig({ home });
  assertModelCredentials(config, home);
  const level = parseLevel(process.env.HEARTH_LOG, config.log.level);
  // The dashboard's Logs page shows the newest lines; kept only when it is enabled.
  const logTail = config.dashboard.enabled ? new LogTail() : undefined;
  const log = daemonLogger(level, logTail, logsDir);

  const { promise: stopped, resolve: exitWith } = Promise.withResolvers<number>();
  const starting = new AbortController();
  let gateway: Gateway | null = null;
  let stopping = false;
  stop.onStop((reason, count) => {
    if (stopping) {
      // Our own process.disconnect() at the end also reads as "launcher gone": not a second request.
      if (reason.kind === "signal" && count > 1) {
        log.warn("gateway.forced_exit", { signal: reason.signal });
        process.exit(1);
      }
      return;
    }
    stopping = true;
    log.info("gateway.stopping", { ...describeStop(reason), ...(gateway ? {} : { during: "start-up" }) });
    if (gateway) void stopGateway(gateway, log).then(exitWith);
    else starting.abort();
  });

  try {
    gateway = await startGateway({ ...gatewayOptions(home, config, log, { daemon: true }), stopSignal: starting.signal, ...(logTail ? { logTail } : {}) });
  } catch (err) {
    if (!(err instanceof StartupStopped)) throw err;
    disconnectSupervisor();
    return 0;
  }
  if (stopping) {
    // Asked to stop after start-up's last step: stop now.
    void stopGateway(gateway, log).then(exitWith);
  } else {
    // A supervisor gone meanwhile (the launcher killed) makes the send fail: that is a stop
    // request (process/stop.ts), not an error to crash on.
    process.send?.("ready", undefined, {}, () => {});
    if (out.isTTY && !underPm2()) out.write(readyText(gateway.status().channels));
    // Node writes the compile cache (bin/hearth.js) only at a clean exit: a daemon that is
    // killed or crashes would leave it cold, and every restart of a crash loop would strip and
    // compile every source file again (slower, and ~16 MB more). Written once it is ready.
    module.flushCompileCache?.();
    log.debug("gateway.compile_cache_written");
  }
  return stopped;
}

/** The ready line of a terminal's start, and a line for each configured channel that is not running. */
export function readyText(channels: GatewayStatus["channels"]): string {
  const down = channels.flatMap((c) => (c.state === "failed" ? [`${c.id} is not running: ${c.reason}\n`] : []));
  return `ready — talk to it with \`${hearthCmd("chat")}\`\n${down.join("")}`;
}

async function stopGateway(gateway: Gateway, log: Logger): Promise<number> {
  const code = await gateway.stop().then(
    () => 0,
    (err: unknown) => (log.error("gateway.stop_failed", { error: err }), 1),
  );
  // A parse still running (a PDF's search text) would hold the process for up to its limit.
  await (await import("../parse/pool.ts")).stopParsing();
  disconnectSupervisor();
  return code;
}

/**
 * pm2 (or the launcher) keeps an IPC channel open to its app; while it is open the process cannot
 * exit on its own, and pm2 waits its kill_timeout, then SIGKILLs it.
 */
function disconnectSupervisor(): void {
  if (process.connected) process.disconnect();
}
