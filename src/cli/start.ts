// `hearth start`: the daemon in the foreground (pm2 runs this). SIGTERM or SIGINT shut it down
// cleanly: intake stops, active runs get `agent.shutdownGraceMs`, then everything closes.
import { assertModelCredentials } from "../gateway/agent-runtime.ts";
import { loadConfig } from "../gateway/config.ts";
import { startGateway } from "../gateway/gateway.ts";
import { gatewayOptions } from "../gateway/setup.ts";
import { createLogger, parseLevel } from "../log.ts";

export async function runStart(home: string): Promise<number> {
  const config = loadConfig({ home });
  assertModelCredentials(config, home);
  const log = createLogger({ level: parseLevel(process.env.HEARTH_LOG, config.log.level) });
  const gateway = await startGateway(gatewayOptions(home, config, log, { daemon: true }));
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
      void gateway.stop().then(() => resolve(0));
    };
    process.on("SIGTERM", shutdown);
    process.on("SIGINT", shutdown);
  });
}
