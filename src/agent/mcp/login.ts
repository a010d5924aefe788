// A login to an OAuth-protected MCP server, for a machine without a browser of its own: a
// loopback listener (`http://127.0.0.1:<port>/callback`) waits for the authorization server's
// redirect, checks the state it carries, and trades the code for tokens. `hearth mcp login`,
// `hearth mcp call` and the daemon (when a server turns out to need a login) all use it.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { registerSecret } from "../../process/log.ts";
import { expandVariables, type McpServerConfig } from "./config.ts";
import { HearthOAuthProvider } from "./oauth-provider.ts";
import type { McpAuthStore } from "./oauth-store.ts";

export type LoginStart =
  /** Tokens were obtained without the owner (client credentials). */
  | { type: "authorized" }
  /** The owner must open `authorizationUrl`; `done` settles when the browser came back (or not). */
  | { type: "redirect"; authorizationUrl: string; done: Promise<LoginEnd>; cancel: () => Promise<void> };

export type LoginEnd = { type: "authorized" } | { type: "failed"; error: string };

export interface LoginOptions {
  name: string;
  config: McpServerConfig;
  store: McpAuthStore;
  env?: NodeJS.ProcessEnv;
  /** How long the listener waits for the browser (default 10 minutes). */
  timeoutMs?: number;
}

const PAGE_OK = "<!doctype html><meta charset=utf-8><title>Hearth</title><p>Hearth is logged in. You can close this tab.</p>\n";

/**
 * Starts a fresh login. The stored tokens stay until the login saves new ones (the flow does not
 * see them, so it asks the owner rather than refreshing): a step-up login leaves the server's
 * other tools working meanwhile, and a failed login loses nothing. The client registration is
 * kept. Throws the flow's error (discovery, registration, PKCE refused) before any listener is
 * left open.
 */
export async function beginLogin(o: LoginOptions): Promise<LoginStart> {
  const url = o.config.url;
  if (!url) throw new Error(`The MCP server "${o.name}" runs as a command (stdio): only HTTP servers log in.`);
  const env = o.env ?? process.env;
  // A step-up's scopes (a 403 named them for a call) come before those the server names to anyone.
  const challenge = await readChallenge(o.name, url, o.config, env);
  const asked = o.store.read(o.name, url).scope ?? challenge.scope;
  o.store.update(o.name, url, (r) => {
    const { verifier: _old, ...rest } = r;
    return rest;
  });
  const listener = await listenLoopback();
  const state = randomBytes(24).toString("base64url");
  let authorizationUrl: URL | null = null;
  const provider = new HearthOAuthProvider({
    server: o.name,
    url,
    auth: o.config.auth,
    store: o.store,
    env,
    login: { redirectUrl: listener.redirectUrl, state, onAuthorizationUrl: (u) => (authorizationUrl = u) },
  });
  let first: Awaited<ReturnType<typeof auth>>;
  try {
    first = await auth(provider, { serverUrl: url, ...(asked ? { scope: asked } : {}), ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}) });
  } catch (err) {
    await listener.close();
    throw err;
  }
  if (first === "AUTHORIZED" || !authorizationUrl) {
    await listener.close();
    return { type: "authorized" };
  }
  const timeoutMs = o.timeoutMs ?? 600_000;
  const done = (async (): Promise<LoginEnd> => {
    try {
      const code = await listener.waitForCode(state, timeoutMs);
      await auth(provider, { serverUrl: url, authorizationCode: code });
      return { type: "authorized" };
    } catch (err) {
      return { type: "failed", error: err instanceof Error ? err.message : String(err) };
    } finally {
      provider.invalidateCredentials("verifier");
      await listener.close();
    }
  })();
  return { type: "redirect", authorizationUrl: String(authorizationUrl), done, cancel: () => listener.close() };
}

interface Challenge {
  scope?: string | undefined;
  resourceMetadataUrl?: URL | undefined;
}

/**
 * What the server's 401 says to a client without a token (`WWW-Authenticate: Bearer
 * resource_metadata="…", scope="…"`): the scope it names is the one to ask for, ahead of every
 * scope its metadata lists. Asked the way a connection starts (an unauthenticated `initialize`),
 * since that is the request a server answers with its challenge. Empty when the server answers
 * otherwise or not at all: the flow then finds what it needs by discovery, as before.
 */
async function readChallenge(name: string, url: string, config: McpServerConfig, env: NodeJS.ProcessEnv): Promise<Challenge> {
  const configured = expandVariables(config.headers, env, `mcp.servers.${name}.headers`);
  for (const v of Object.values(configured)) registerSecret(v);
  const headers = {
    ...configured,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const initialize = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "hearth", version: "0.1.0" } } };
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", headers, body: JSON.stringify(initialize), signal: AbortSignal.timeout(config.timeoutMs) });
  } catch {
    return {};
  }
  await res.body?.cancel().catch(() => {});
  if (res.status === 401) {
    const { scope, resourceMetadataUrl } = extractWWWAuthenticateParams(res);
    return { scope, resourceMetadataUrl };
  }
  // A server that let the probe in opened a session for it: end it (best effort).
  const session = res.headers.get("mcp-session-id");
  if (res.ok && session) await fetch(url, { method: "DELETE", headers: { ...headers, "mcp-session-id": session }, signal: AbortSignal.timeout(config.timeoutMs) }).catch(() => {});
  return {};
}

interface Loopback {
  redirectUrl: string;
  /** The code of the first callback whose state matches; rejects on an error callback or the timeout. */
  waitForCode(state: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

async function listenLoopback(): Promise<Loopback> {
  let expected = "";
  let settle: { resolve: (code: string) => void; reject: (e: Error) => void } | null = null;
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || u.pathname !== "/callback") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found.\n");
      return;
    }
    const state = u.searchParams.get("state") ?? "";
    if (!expected || !sameSecret(state, expected)) {
      // A request without this login's state is someone else's: refuse it and keep waiting.
      res.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end("This login link is not the one Hearth is waiting for (the state does not match).\n");
      return;
    }
    const error = u.searchParams.get("error");
    const code = u.searchParams.get("code");
    if (error || !code) {
      const why = error ? `${error}${u.searchParams.get("error_description") ? `: ${u.searchParams.get("error_description")}` : ""}` : "no code came back";
      res.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end(`The login failed: ${why}.\n`);
      settle?.reject(new Error(`the authorization server refused the login (${why})`));
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE_OK);
    settle?.resolve(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      settle?.reject(new Error("the login was cancelled"));
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    waitForCode: (state, timeoutMs) => {
      expected = state;
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
        timer.unref();
        settle = {
          resolve: (c) => (clearTimeout(timer), resolve(c)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        };
      });
    },
    close,
  };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
