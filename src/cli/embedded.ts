// A gateway inside the CLI process, for `hearth chat` when no daemon runs: the CLI channel only.
import { assertModelCredentials } from "../config/credentials.ts";
import { applyHomeEnv, loadConfig } from "../config/config.ts";
import { startGateway, type Gateway } from "../gateway/gateway.ts";
import { createRpcHandler } from "../gateway/control/rpc.ts";
import { gatewayOptions } from "../gateway/setup.ts";
import { createLogger, parseLevel } from "../process/log.ts";
import { terminalLogFormat } from "./terminal-log.ts";

export async function startEmbeddedGateway(home: string, stderr: NodeJS.WritableStream): Promise<{ gateway: Gateway; rpc: (m: string, p: unknown) => Promise<unknown> }> {
  applyHomeEnv(home);
  const config = loadConfig({ home });
  assertModelCredentials(config, home);
  // The terminal is for the conversation: only warnings, as short lines, unless HEARTH_LOG says otherwise.
  const log = createLogger({ level: parseLevel(process.env.HEARTH_LOG, "warn"), sink: { write: (l) => stderr.write(l) }, format: terminalLogFormat });
  const gateway = await startGateway(gatewayOptions(home, config, log, { daemon: false }));
  return { gateway, rpc: createRpcHandler(gateway.context) };
}
