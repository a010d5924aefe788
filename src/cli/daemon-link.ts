// The interactive chat's connection to the daemon, which outlives the daemon's restarts: when
// the socket closes, the chat is told at once (`lost`), the socket is tried again until a daemon
// answers and is ready (`back`), and what was typed meanwhile is sent then. A message the daemon
// had taken before it went is not sent again: its answer comes after the restart, to the
// listening chat. Requests that make sense only on a live connection (Ctrl+C's abort, an
// approval's answer) are dropped while there is none; their questions went with the daemon.
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ClientRequest, ServerEvent } from "../gateway/control/protocol.ts";
import { lineDecoder } from "../gateway/control/protocol.ts";
import type { GatewayStatus } from "../gateway/status.ts";
import { closeSocket, DaemonGoneError, Dispatcher, openSocket, type GatewayClient, type LinkEvent } from "./client.ts";

/** How often a socket that went away is tried again: quickly at first, then every 2 s. */
const RETRY_MS = { first: 200, max: 2_000 } as const;

/** Connects to the daemon's socket; null when no daemon listens there now. */
export async function connectDaemonLink(socketPath: string): Promise<GatewayClient | null> {
  const first = await openSocket(socketPath);
  if (!first) return null;
  const d = new Dispatcher();
  let socket: Socket | null = null;
  let closed = false;
  const listeners: Array<(e: LinkEvent) => void> = [];
  const tell = (e: LinkEvent) => listeners.forEach((l) => l(e));
  /** False when `s` cannot take it (closing). */
  const write = (s: Socket, r: ClientRequest): boolean => {
    if (!s.writable) return false;
    s.write(`${JSON.stringify(r)}\n`);
    return true;
  };

  const use = (s: Socket) => {
    socket = s;
    s.on("close", () => {
      if (socket !== s) return;
      socket = null;
      if (closed) return d.failAll(new DaemonGoneError());
      tell({ type: "lost", answers: d.connectionLost(new DaemonGoneError()) });
      void reconnect();
    });
  };
  const attach = (s: Socket) => {
    s.on("data", lineDecoder((v) => d.handle(v as ServerEvent), () => {}));
    s.on("error", () => {});
  };

  /** Tries the socket until a daemon answers there with its terminal channel running. */
  const reconnect = async () => {
    for (let wait: number = RETRY_MS.first; !closed; wait = Math.min(RETRY_MS.max, wait * 2)) {
      await sleep(wait, undefined, { ref: false });
      if (closed) return;
      const s = await openSocket(socketPath);
      if (!s) continue;
      attach(s);
      // The socket is bound before the channels start (gateway.ts step 6): a message sent then
      // would be refused. Ready once the terminal's channel runs.
      if (!(await ready(s, d)) || closed) {
        s.destroy();
        continue;
      }
      use(s);
      tell({ type: "back" });
      for (const c of d.unsent()) c.sent = write(s, c.request);
      return;
    }
  };

  attach(first);
  use(first);
  const client = d.client(
    "daemon",
    // Without a connection a chat waits in the dispatcher for the next one; nothing else keeps.
    (r) => socket !== null && write(socket, r),
    async () => {
      closed = true;
      if (socket) await closeSocket(socket);
    },
  );
  return {
    ...client,
    onLink: (fn) => void listeners.push(fn),
    dropUnsent: () => d.dropUnsent(),
  };
}

/** True once the daemon on `s` says its terminal channel runs; false when it goes away first, or does not say within about 30 s. */
async function ready(s: Socket, d: Dispatcher): Promise<boolean> {
  for (let asked = 0; asked < 25 && !s.destroyed; asked++) {
    const status = await new Promise<GatewayStatus | null>((resolve) => {
      const waiter = (st: GatewayStatus) => (clearTimeout(timer), resolve(st));
      const timer = setTimeout(() => {
        d.statusWaiters.splice(d.statusWaiters.indexOf(waiter) >>> 0, 1);
        resolve(null);
      }, 1_000);
      d.statusWaiters.push(waiter);
      s.write(`${JSON.stringify({ type: "status" } satisfies ClientRequest)}\n`);
    });
    if (status?.channels.some((c) => c.id === "cli" && c.state === "running")) return true;
    await sleep(200, undefined, { ref: false });
  }
  return false;
}
