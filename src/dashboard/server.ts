// The dashboard's HTTP server, started by the gateway when `dashboard.enabled`. Only this file
// and access.ts load at start: the pages (app.ts and pages/) are imported on the first request,
// so a dashboard nobody opens costs the idle daemon next to nothing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { isLoopbackHost } from "../config/schema.ts";
import type { Logger } from "../log.ts";
import { DashboardAccess } from "./access.ts";
import type { DashboardHost } from "./host.ts";

export interface DashboardOptions {
  host: string;
  port: number;
  allowRemote: boolean;
  log: Logger;
  /** The gateway's side; built on the first request. */
  openHost: () => DashboardHost;
}

export interface DashboardServer {
  /** `http://127.0.0.1:7420/` (the port the system picked for port 0). */
  readonly url: string;
  /** The URL that logs a browser in once (a fresh one-time token). */
  loginUrl(): string;
  /** Ends every session; returns how many ended. */
  rotate(): number;
  close(): Promise<void>;
}

/** What app.ts gets for every request. */
export interface AppContext {
  access: DashboardAccess;
  host: DashboardHost;
  /** Host header values that name this server (DNS rebinding guard). */
  allowedHosts: ReadonlySet<string>;
  log: Logger;
}

type App = (req: IncomingMessage, res: ServerResponse, ctx: AppContext) => Promise<void>;

export async function startDashboard(opts: DashboardOptions): Promise<DashboardServer> {
  const { log } = opts;
  const access = new DashboardAccess();
  let ctx: AppContext | null = null;
  let app: Promise<App> | null = null;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    app ??= import("./app.ts").then((m) => m.handleRequest);
    void app
      .then((handle) => handle(req, res, (ctx ??= { access, host: opts.openHost(), allowedHosts: hostsOf(opts.host, port()), log })))
      .catch((err: unknown) => {
        log.error("dashboard.request_failed", { error: err });
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.end("The dashboard failed on this request; the daemon's log says why.\n");
      });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const port = () => (server.address() as AddressInfo).port;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const hostPart = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const url = `http://${hostPart}:${port()}/`;
  if (!isLoopbackHost(opts.host)) log.warn("dashboard.remote", { url, note: "the dashboard is reachable beyond this machine (dashboard.allowRemote); anyone who can reach it still needs a login link" });
  log.info("dashboard.listening", { url });
  return {
    url,
    loginUrl: () => `${url}login?token=${access.issueToken()}`,
    rotate: () => access.rotate(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The bound address and, on loopback, `localhost`, each with the port. */
function hostsOf(host: string, port: number): Set<string> {
  const names = new Set([host.includes(":") ? `[${host}]` : host]);
  if (isLoopbackHost(host)) names.add("localhost");
  return new Set([...names].map((n) => `${n}:${port}`));
}
