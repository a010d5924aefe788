// The dashboard's HTTP server, started by the gateway when `dashboard.enabled`. Only this file
// and access.ts load at start: the pages (app.ts and pages/) are imported on the first request,
// so a dashboard nobody opens costs the idle daemon next to nothing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { isLoopbackHost } from "../config/schema.ts";
import type { Logger } from "../process/log.ts";
import { DashboardAccess, sessionCookie } from "./access.ts";
import type { AppContext } from "./app.ts";
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
  /**
   * `http://127.0.0.1:7420/` (the port the system picked for port 0); bound to every address
   * (`0.0.0.0`, `::`), the machine's first outward address, which other machines can open.
   */
  readonly url: string;
  /** The URL that logs a browser in once (a fresh one-time token). */
  loginUrl(): string;
  /** Ends every session; returns how many ended. */
  rotate(): number;
  close(): Promise<void>;
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
      .then((handle) => handle(req, res, (ctx ??= { access, host: opts.openHost(), isOwnHost: ownHosts(opts.host, port()), cookieName: sessionCookie(port()), log })))
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
  const url = `http://${hostPart(isWildcard(opts.host) ? outwardAddress() : opts.host)}:${port()}/`;
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

const isWildcard = (host: string): boolean => host === "0.0.0.0" || host === "::";
const hostPart = (address: string): string => (address.includes(":") ? `[${address}]` : address);

/**
 * The Host header values that name this server, each with the port: the bound address, and
 * `localhost` on loopback; bound to every address, also each of the machine's addresses and its
 * name. The machine's addresses can change (DHCP): a name not known is checked against them anew.
 */
function ownHosts(host: string, port: number): (hostHeader: string) => boolean {
  const names = (): Set<string> => {
    const out = new Set<string>([hostPart(host)]);
    if (isLoopbackHost(host)) out.add("localhost");
    if (!isLoopbackHost(host)) out.add(hostname().toLowerCase());
    if (isWildcard(host)) {
      out.add("localhost");
      for (const a of machineAddresses()) out.add(hostPart(a.address));
    }
    return new Set([...out].map((n) => `${n}:${port}`));
  };
  let known = names();
  return (hostHeader) => {
    const h = hostHeader.toLowerCase();
    if (known.has(h)) return true;
    if (!isWildcard(host)) return false;
    known = names();
    return known.has(h);
  };
}

/** Every address of the machine's interfaces, IPv4 first (a link-local IPv6 address needs a zone no URL can carry: left out). */
function machineAddresses(): Array<{ address: string; internal: boolean }> {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  return all.filter((a) => !(a.family === "IPv6" && a.scopeid)).sort((a, b) => (a.family === b.family ? 0 : a.family === "IPv4" ? -1 : 1));
}

/** The address a link printed for another machine should name: the first outward one, else the machine's name. */
function outwardAddress(): string {
  return machineAddresses().find((a) => !a.internal)?.address ?? hostname();
}
