// The daemon's control socket (<home>/gateway.sock, mode 600: the owner only). `hearth chat`,
// `hearth status` and the other commands talk to the running daemon through it.
import { chmodSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { CliChannel } from "../channels/cli.ts";
import type { Logger } from "../log.ts";
import { lineDecoder, type ClientRequest, type ServerEvent } from "./control-protocol.ts";
import type { GatewayStatus } from "./status.ts";

export interface ControlHandlers {
  abort(): void;
  status(): GatewayStatus;
  /** Runs a named operation (pairing, cron…); rejects with a message for the user. */
  rpc(method: string, params: unknown): Promise<unknown>;
}

export interface ControlSocket {
  close(): Promise<void>;
}

export async function startControlSocket(path: string, cli: CliChannel, handlers: ControlHandlers, log: Logger): Promise<ControlSocket> {
  // We hold the gateway lock, so a socket file left here belongs to a dead gateway.
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => serveClient(socket, cli, handlers, log, sockets));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function serveClient(socket: Socket, cli: CliChannel, handlers: ControlHandlers, log: Logger, sockets: Set<Socket>): void {
  sockets.add(socket);
  const send = (e: ServerEvent) => {
    if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(e)}\n`);
  };
  const client = cli.attach(send);
  socket.on("data", lineDecoder(
    (value) => void handle(value as ClientRequest),
    (line) => send({ type: "error", message: `Not a JSON request: ${line.slice(0, 80)}` }),
  ));
  socket.on("error", (err) => log.debug("control.client_error", { error: err }));
  socket.on("close", () => {
    cli.detach(client);
    sockets.delete(socket);
  });

  async function handle(req: ClientRequest): Promise<void> {
    try {
      switch (req?.type) {
        case "chat": {
          if (typeof req.text !== "string" || !req.text.trim()) return send({ type: "error", message: "chat needs a non-empty text" });
          const requestId = cli.receive(client, req.text, req.requestId);
          return send({ type: "accepted", requestId });
        }
        case "abort":
          handlers.abort();
          return;
        case "status":
          return send({ type: "status", status: handlers.status() });
        case "rpc":
          try {
            send({ type: "rpc_result", id: req.id, ok: true, result: await handlers.rpc(req.method, req.params) });
          } catch (err) {
            send({ type: "rpc_result", id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) });
          }
          return;
        default:
          return send({ type: "error", message: `Unknown request type ${JSON.stringify((req as { type?: unknown })?.type)}` });
      }
    } catch (err) {
      log.error("control.request_failed", { error: err });
      send({ type: "error", message: err instanceof Error ? err.message : String(err) });
    }
  }
}
