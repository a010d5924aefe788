// A login to an OAuth-protected MCP server, for a machine without a browser of its own: a
// loopback listener (`http://127.0.0.1:<port>/callback`) waits for the authorization server's
// redirect, checks the state it carries, and trades the code for tokens. `hearth mcp login`,
// `hearth mcp call` and the daemon (when a server turns out to need a login) all use it.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import type { McpServerConfig } from "./config.ts";
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
  const asked = o.store.read(o.name, url).scope;
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
    env: o.env ?? process.env,
    login: { redirectUrl: listener.redirectUrl, state, onAuthorizationUrl: (u) => (authorizationUrl = u) },
  });
  let first: Awaited<ReturnType<typeof auth>>;
  try {
    first = await auth(provider, { serverUrl: url, ...(asked ? { scope: asked } : {}) });
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
