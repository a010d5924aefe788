// `hearth start`: the daemon in the foreground (pm2 runs this). SIGTERM or SIGINT shut it down
// cleanly: intake stops, active runs get `agent.shutdownGraceMs`, then everything closes.
import { assertModelCredentials } from "../gateway/agent-runtime.ts";
import { loadConfig } from "../gateway/config.ts";
import { startGateway } from "../gateway/gateway.ts";
import { gatewayOptions } from "../gateway/setup.ts";
import { createLogger, parseLevel, underPm2 } from "../log.ts";

export async function runStart(home: string): Promise<number> {
  const config = loadConfig({ home });
  assertModelCredentials(config, home);
  const level = parseLevel(process.env.HEARTH_LOG, config.log.level);
  // pm2 shows stderr as errors (in red): under pm2 only warnings and errors go there.
  const log = underPm2()
    ? createLogger({ level, sink: { write: (l) => process.stdout.write(l) }, problemSink: { write: (l) => process.stderr.write(l) } })
    : createLogger({ level });
  // A signal during start-up (the control socket and recovered replies are live before
  // startGateway returns) must not kill the process outright: it is kept and acted on at once.
  let early: NodeJS.Signals | undefined;
  const keep = (signal: NodeJS.Signals) => void (early ??= signal);
  process.on("SIGTERM", keep);
  process.on("SIGINT", keep);
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway(gatewayOptions(home, config, log, { daemon: true }));
  } finally {
    process.off("SIGTERM", keep);
    process.off("SIGINT", keep);
  }
  process.send?.("ready");

  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn("gateway.forced_exit", { signal });
        process.exit(1);
      }
      stopping = true;
      log.info("gateway.stopping", { signal });
      void gateway.stop().then(
        () => 0,
        (err: unknown) => (log.error("gateway.stop_failed", { error: err }), 1),
      ).then(async (code) => {
        // A parse still running (a PDF's search text) would hold the process for up to its limit.
        await (await import("../parse/pool.ts")).stopParsing();
        // pm2 keeps an IPC channel open to its app; while it is open the process cannot exit on
        // its own, and pm2 waits its kill_timeout, then SIGKILLs it.
        if (process.connected) process.disconnect();
        resolve(code);
      });
    };
    process.on("SIGTERM", shutdown);
    process.on("SIGINT", shutdown);
    if (early) shutdown(early);
  });
}
