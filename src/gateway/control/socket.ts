// The daemon's control socket (<home>/gateway.sock, mode 600: the owner only). `hearth chat`,
// `hearth status` and the other commands talk to the running daemon through it. A client gets
// lines of at most 1 MB (a longer one closes the connection) and request ids it has not used
// before on its connection.
import { unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { CliChannel } from "../../channels/terminal/channel.ts";
import type { Logger } from "../../process/log.ts";
import { lineDecoder, MAX_REQUEST_LINE_BYTES, type ClientRequest, type ServerEvent } from "./protocol.ts";
import type { GatewayStatus } from "../status.ts";

export interface ControlHandlers {
  abort(): void;
  status(): GatewayStatus;
  /** Runs a named operation (pairing, cron…); rejects with a message for the user. */
  rpc(method: string, params: unknown): Promise<unknown>;
  /**
   * Asked before a request that answers an approval (`choose`) or hands out the owner's powers
   * (PRIVILEGED_RPC): null lets it through, else the refusal sent back. Absent: every request passes.
   */
  guard?: (socket: Socket) => Promise<string | null>;
}

export interface ControlSocket {
  close(): Promise<void>;
}

/** Operations that grant someone the owner's powers: a pairing, a dashboard login, a person's accounts or tools. */
export const PRIVILEGED_RPC: readonly string[] = ["pairing.approve", "dashboard.login", "dashboard.rotate", "people.add", "people.link", "people.set"];

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
    server.once("listening", () => {
      server.off("error", reject);
      resolve();
    });
    listenOwnerOnly(server, path);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Binds the socket file with mode 600 from its first moment: a chmod after listen would leave a
 * window in which another user could connect. The umask is process-wide, but the bind happens
 * synchronously inside listen(), so no other code runs while it is narrowed.
 */
function listenOwnerOnly(server: Server, path: string): void {
  const previous = process.umask(0o177);
  try {
    server.listen(path);
  } finally {
    process.umask(previous);
  }
}

function serveClient(socket: Socket, cli: CliChannel, handlers: ControlHandlers, log: Logger, sockets: Set<Socket>): void {
  sockets.add(socket);
  const send = (e: ServerEvent) => {
    if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(e)}\n`);
  };
  const client = cli.attach(send);
  const usedIds = new Set<string>();
  socket.on("data", lineDecoder(
    (value) => void handle(value as ClientRequest),
    (line) => send({ type: "error", message: `Not a JSON request: ${line.slice(0, 80)}` }),
    {
      maxLineBytes: MAX_REQUEST_LINE_BYTES,
      onTooLong: () => {
        log.warn("control.line_too_long", { limitBytes: MAX_REQUEST_LINE_BYTES });
        send({ type: "error", message: `Request line longer than ${MAX_REQUEST_LINE_BYTES} bytes: closing the connection.` });
        socket.end(() => socket.destroy());
      },
    },
  ));

  /** False (and the client told) when `id` was used before on this connection. */
  const freshId = (id: unknown): boolean => {
    if (id === undefined) return true;
    if (typeof id !== "string" || id.length === 0 || id.length > 200) {
      send({ type: "error", message: "A request id must be a string of 1 to 200 characters." });
      return false;
    }
    if (usedIds.has(id)) {
      send({ type: "error", requestId: id, message: `Request id "${id}" was already used on this connection; each request needs a new one.` });
      return false;
    }
    usedIds.add(id);
    return true;
  };
  socket.on("error", (err) => log.debug("control.client_error", { error: err }));
  socket.on("close", () => {
    cli.detach(client);
    sockets.delete(socket);
  });

  async function handle(req: ClientRequest): Promise<void> {
    try {
      switch (req?.type) {
        case "chat": {
          const files = Array.isArray(req.files) ? req.files.filter((f): f is string => typeof f === "string") : [];
          if (typeof req.text !== "string" || (!req.text.trim() && files.length === 0)) return send({ type: "error", message: "chat needs a non-empty text" });
          if (!freshId(req.requestId)) return;
          const requestId = cli.receive(client, req.text, req.requestId, files);
          return send({ type: "accepted", requestId });
        }
        case "abort":
          handlers.abort();
          return;
        case "status":
          return send({ type: "status", status: handlers.status() });
        case "listen":
          return send({ type: "mailbox", letters: cli.listen(client) });
        case "choose": {
          if (typeof req.key !== "string" || typeof req.choiceId !== "string") return send({ type: "error", message: "choose needs a key and a choiceId" });
          const refused = await handlers.guard?.(socket);
          if (refused) return send({ type: "error", message: refused });
          await cli.choose(req.key, req.choiceId);
          return;
        }
        case "rpc":
          if (req.id === undefined) return send({ type: "error", message: "rpc needs an id" });
          if (!freshId(req.id)) return;
          try {
            const refused = PRIVILEGED_RPC.includes(String(req.method)) ? await handlers.guard?.(socket) : null;
            if (refused) throw new Error(refused);
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
