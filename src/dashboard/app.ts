// Every dashboard request, in the order its checks run: the Host header names this server (DNS
// rebinding); the connection does not come from another user's program on this machine (a
// replayed cookie: peer-user.ts); a browser request another site started is a top-level
// navigation (Sec-Fetch-*); then the one-time login, the session cookie, and for a
// state-changing request the Origin and the CSRF token; only then a page, a static file or an
// action. A refusal carries no data. No CORS header is ever sent, so no other site may read a
// response.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { isLoopbackHost } from "../config/schema.ts";
import type { Logger } from "../process/log.ts";
import { sameSecret, type DashboardAccess, type DashboardSession, type LoginSource } from "./access.ts";
import type { DashboardHost } from "./host.ts";
import { loginPage, pageDocument } from "./layout.ts";
import { loadPages, STREAMED, type ActionResult, type Page } from "./pages.ts";
import { peerUid } from "./peer-user.ts";
import { staticFile } from "./static-files.ts";

/** JSON bodies above this are refused (an attachment of the chat is the largest thing posted). */
const MAX_BODY_BYTES = 30 * 1024 * 1024;

const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // The login link's token must not leak to any other site through a Referer.
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** What app.ts gets for every request (from server.ts, which loads this file on the first one). */
export interface AppContext {
  access: DashboardAccess;
  host: DashboardHost;
  /** Whether a Host header value names this server (DNS rebinding guard). */
  isOwnHost(hostHeader: string): boolean;
  /** The session cookie's name (it holds the port). */
  cookieName: string;
  log: Logger;
}

export async function handleRequest(req: IncomingMessage, res: ServerResponse, ctx: AppContext): Promise<void> {
  // A path is joined to the origin, never resolved against it: "//x" would read as a host, and
  // "//" is no URL at all (a 500).
  const target = req.url ?? "/";
  const url = target.startsWith("/") ? new URL(`http://dashboard.invalid${target}`) : new URL(target, "http://dashboard.invalid");
  if (!ctx.isOwnHost(req.headers.host ?? "")) return refuse(res, 421, "This address is not the dashboard's (Host header refused).");
  if (!ownersConnection(req.socket)) {
    ctx.log.warn("dashboard.other_user_refused", {});
    return refuse(res, 403, "Refused: this connection comes from another user's program on this machine; the dashboard answers only its owner's.");
  }
  const fetched = fetchFacts(req);
  if (url.pathname === "/login") return login(req, res, ctx, url, fetched);
  if (fetched.fromElsewhere && !fetched.topLevel) return refuse(res, 403, "Refused: another site asked for this (Sec-Fetch-Site).");

  const session = ctx.access.sessionOf(req.headers.cookie, ctx.cookieName);
  if (!session) return refuse(res, 401, "Not logged in. Run `hearth dashboard` on the machine Hearth runs on for a login link.");

  const pages = await loadPages();
  if (req.method === "GET" || req.method === "HEAD") {
    if (url.pathname.startsWith("/static/")) return serveStatic(res, url.pathname.slice("/static/".length));
    if (url.pathname === "/api/logs/stream") return streamLogs(req, res, ctx);
    if (url.pathname === "/api/chat/notices") return streamNotices(res, ctx);
    const page = pages.find((p) => p.path === url.pathname);
    if (!page) return refuse(res, 404, "No such page.");
    const body = await page.render(ctx.host, url);
    return send(res, 200, "text/html; charset=utf-8", pageDocument({ pages, current: page, csrf: session.csrf, body, now: ctx.host.clock() }));
  }
  if (req.method !== "POST") return refuse(res, 405, "Method not allowed.");
  if (!sameOrigin(req)) return refuse(res, 403, "Refused: the request did not come from the dashboard's own pages (Origin).");
  if (!sameSecret(header(req, "x-csrf-token"), session.csrf)) return refuse(res, 403, "Refused: the request lacks the dashboard's CSRF token. Reload the page.");
  if (!(req.headers["content-type"] ?? "").startsWith("application/json")) return refuse(res, 415, "Send JSON.");
  const m = /^\/api\/([a-z]+)\/([a-z-]+)$/.exec(url.pathname);
  const page = m ? pages.find((p) => p.id === m[1]) : undefined;
  const action = m && page?.actions?.[m[2]!];
  if (!page || !action) return refuse(res, 404, "No such action.");
  const body = await readJson(req);
  if (body === null) return refuse(res, 400, "The request body is not a JSON object (or is too large).");
  ctx.log.info("dashboard.action", { page: page.id, action: m![2] });
  await runAction(res, ctx, page, () => action(ctx.host, body, { req, res, session }));
}

async function runAction(res: ServerResponse, ctx: AppContext, page: Page, act: () => Promise<ActionResult> | ActionResult): Promise<void> {
  let result: ActionResult;
  try {
    result = await act();
  } catch (err) {
    // Errors of the stores (a bad cron expression, an unknown job) are written for the user.
    ctx.log.info("dashboard.action_refused", { page: page.id, error: err });
    result = { refusal: 400, error: err instanceof Error ? err.message : String(err) };
  }
  if (result === STREAMED) return;
  const { refusal, ...fields } = result;
  const status = typeof refusal === "number" ? refusal : 200;
  send(res, status, "application/json; charset=utf-8", JSON.stringify({ ok: status === 200, ...fields }));
}

function login(req: IncomingMessage, res: ServerResponse, ctx: AppContext, url: URL, fetched: FetchFacts): void {
  if (req.method !== "GET") return refuse(res, 405, "Method not allowed.");
  // An image, a script or a frame of some page is never the owner opening a link: refused
  // uncounted (a hostile page could otherwise fire made-up links to lock the logins), the token kept.
  if (!fetched.topLevel) return refuse(res, 403, "A login link works only when opened as a page.");
  const result = ctx.access.login(url.searchParams.get("token") ?? "", loginSource(req, fetched));
  switch (result.type) {
    case "rate_limited":
      return refuse(res, 429, "Too many failed logins; wait a minute, then use a new link from `hearth dashboard`.");
    case "refused":
      ctx.log.warn("dashboard.login_refused", {});
      return refuse(res, 403, "This login link was used already or has expired. Run `hearth dashboard` for a new one.");
    case "ok":
      ctx.log.info("dashboard.login", {});
      res.setHeader("set-cookie", `${ctx.cookieName}=${result.session.id}; HttpOnly; SameSite=Strict; Path=/`);
      // A page rather than a redirect: the cookie is then sent on a same-site navigation, even
      // when the link was opened from another application.
      return send(res, 200, "text/html; charset=utf-8", loginPage());
  }
}

interface FetchFacts {
  /** A browser says another site (another port of this host included) started the request. */
  fromElsewhere: boolean;
  /** A top-level navigation (the address bar, a link, a bookmark), or no browser said otherwise. */
  topLevel: boolean;
}

/** What the browser's Sec-Fetch-* headers say; a client without them (curl, a script) is taken at its word. */
function fetchFacts(req: IncomingMessage): FetchFacts {
  const site = header(req, "sec-fetch-site");
  const mode = header(req, "sec-fetch-mode");
  const dest = header(req, "sec-fetch-dest");
  return {
    fromElsewhere: site === "cross-site" || site === "same-site",
    topLevel: (mode === undefined || mode === "navigate") && (dest === undefined || dest === "document"),
  };
}

function loginSource(req: IncomingMessage, fetched: FetchFacts): LoginSource {
  if (fetched.fromElsewhere) return "elsewhere";
  const peer = req.socket.remoteAddress ?? "";
  return isLoopbackHost(peer.replace(/^::ffff:/, "")) ? "local" : `remote:${peer}`;
}

/** Owner's when the peer is this daemon's user, root, or not on this machine (or it cannot be told); asked once per connection. */
const connectionChecked = new WeakMap<Socket, boolean>();
function ownersConnection(socket: Socket): boolean {
  let ok = connectionChecked.get(socket);
  if (ok === undefined) {
    const uid = process.getuid ? peerUid(socket) : null;
    ok = uid === null || uid === 0 || uid === process.getuid!();
    connectionChecked.set(socket, ok);
  }
  return ok;
}

function sameOrigin(req: IncomingMessage): boolean {
  const origin = header(req, "origin");
  return origin !== undefined && origin === `http://${req.headers.host}`;
}

function serveStatic(res: ServerResponse, name: string): void {
  const file = staticFile(name);
  if (!file) return refuse(res, 404, "No such file.");
  send(res, 200, file.type, file.body);
}

/** Server-sent events: each new log line as it is written, until the page goes away. */
function streamLogs(req: IncomingMessage, res: ServerResponse, ctx: AppContext): void {
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
  res.write(": tail\n\n");
  const off = ctx.host.logs.subscribe((line) => res.write(`data: ${line}\n\n`));
  res.on("close", off);
}

/** Server-sent events: each proactive message to the terminal channel while the Chat page is open. */
function streamNotices(res: ServerResponse, ctx: AppContext): void {
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
  res.write(": notices\n\n");
  const off = ctx.host.chat.watch((text) => res.write(`data: ${JSON.stringify(text)}\n\n`));
  res.on("close", off);
}

export function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type });
  res.end(body);
}

function refuse(res: ServerResponse, status: number, message: string): void {
  send(res, status, "text/plain; charset=utf-8", `${message}\n`);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  try {
    const v: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export type { DashboardSession };
