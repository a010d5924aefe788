// An OAuth-protected Streamable HTTP MCP server on loopback, built on the official SDK's
// server-side auth: authorization server metadata, dynamic registration, PKCE, `resource`
// checks, expiring access tokens with rotating refresh tokens, client credentials, and a tool
// ("admin") that needs a scope the first login does not grant (step-up); optionally a 401 that
// names the scope to ask for, or a 2025-03-26 server without protected-resource metadata (with
// authorization server metadata at its origin, or only the default /authorize, /token and
// /register there). The authorization step
// approves at once and redirects: a test plays the browser with an HTTP client.
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import express, { type Request, type Response } from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { authorizationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/authorize.js";
import { clientRegistrationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/register.js";
import { tokenHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/token.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type { OAuthServerProvider, AuthorizationParams } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import { InvalidGrantError, InvalidTargetError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

export interface OAuthMcpServer {
  /** The MCP endpoint: `http://127.0.0.1:PORT/mcp`. */
  url: string;
  origin: string;
  /** What the server saw, for assertions. */
  seen: {
    registrations: number;
    authorize: Array<{ resource: string | undefined; scopes: string[]; method: string | undefined }>;
    token: Array<{ grant: string; resource: string | undefined }>;
    /** Bearer requests to /mcp refused with 401 (no token, expired, unknown). */
    refused: number;
  };
  /** Access token lifetime (default 1 hour); tests shorten it. */
  tokenTtlMs: number;
  /** Revokes every token: the next request is a 401 and refresh fails (a login is needed). */
  revokeAll(): void;
  close(): Promise<void>;
}

export interface OAuthMcpOptions {
  /** The authorization server metadata leaves out code_challenge_methods_supported. */
  withoutPkce?: boolean;
  /** A confidential client for client_credentials. */
  machineClient?: { id: string; secret: string };
  /** The 401 names these scopes (`WWW-Authenticate: Bearer …, scope="…"`), and a token must carry them. */
  challengeScopes?: string[];
  /**
   * A 2025-03-26 server: no protected-resource metadata, the authorization server at the MCP
   * server's origin, with its metadata there ("metadata") or none at all ("endpoints": only
   * /authorize, /token and /register).
   */
  legacy?: "metadata" | "endpoints";
}

interface Grant {
  clientId: string;
  scopes: string[];
  resource: string;
  expiresAt: number;
}

export async function startOAuthMcpServer(opts: OAuthMcpOptions = {}): Promise<OAuthMcpServer> {
  const app = express();
  const http: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const origin = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  const mcpUrl = new URL("/mcp", origin);
  const seen: OAuthMcpServer["seen"] = { registrations: 0, authorize: [], token: [], refused: 0 };
  const clients = new Map<string, OAuthClientInformationFull>();
  if (opts.machineClient) {
    clients.set(opts.machineClient.id, { client_id: opts.machineClient.id, client_secret: opts.machineClient.secret, redirect_uris: [], grant_types: ["client_credentials"] });
  }
  const codes = new Map<string, { client: string; params: AuthorizationParams }>();
  const access = new Map<string, Grant>();
  const refresh = new Map<string, Omit<Grant, "expiresAt">>();
  const state = { tokenTtlMs: 3_600_000 };

  const issue = (g: Omit<Grant, "expiresAt">): OAuthTokens => {
    const token = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    access.set(token, { ...g, expiresAt: Date.now() + state.tokenTtlMs });
    refresh.set(refreshToken, g);
    return { access_token: token, token_type: "bearer", expires_in: Math.ceil(state.tokenTtlMs / 1000), refresh_token: refreshToken, scope: g.scopes.join(" ") };
  };
  const checkResource = (resource: URL | undefined): string => {
    if (!resource || resource.href !== mcpUrl.href) throw new InvalidTargetError(`resource must be ${mcpUrl.href}, got ${resource?.href ?? "none"}`);
    return resource.href;
  };

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => clients.get(id),
    registerClient: (c) => {
      seen.registrations++;
      const full = c as OAuthClientInformationFull;
      clients.set(full.client_id, full);
      return full;
    },
  };
  const provider: OAuthServerProvider = {
    clientsStore,
    async authorize(client, params, res) {
      const code = randomUUID();
      codes.set(code, { client: client.client_id, params });
      const to = new URL(params.redirectUri);
      to.searchParams.set("code", code);
      if (params.state !== undefined) to.searchParams.set("state", params.state);
      res.redirect(to.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const c = codes.get(code);
      if (!c) throw new InvalidGrantError("unknown code");
      return c.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, _redirect, resource) {
      const c = codes.get(code);
      if (!c || c.client !== client.client_id) throw new InvalidGrantError("unknown code");
      codes.delete(code);
      const r = checkResource(resource);
      if (c.params.resource?.href !== r) throw new InvalidTargetError("resource differs from the authorization request's");
      return issue({ clientId: client.client_id, scopes: c.params.scopes?.length ? c.params.scopes : ["read"], resource: r });
    },
    async exchangeRefreshToken(client, token, _scopes, resource) {
      const g = refresh.get(token);
      if (!g || g.clientId !== client.client_id) throw new InvalidGrantError("unknown refresh token");
      refresh.delete(token);
      return issue({ ...g, resource: checkResource(resource) });
    },
    async verifyAccessToken(token) {
      const g = access.get(token);
      if (!g || g.expiresAt < Date.now()) throw new InvalidTokenError("expired or unknown token");
      return { token, clientId: g.clientId, scopes: g.scopes, expiresAt: Math.floor(g.expiresAt / 1000), resource: new URL(g.resource) };
    },
  };

  app.use((req, _res, next) => {
    if (req.path === "/authorize") {
      const q = req.method === "GET" ? req.query : {};
      seen.authorize.push({ resource: q.resource as string | undefined, scopes: String(q.scope ?? "").split(" ").filter(Boolean), method: q.code_challenge_method as string | undefined });
    }
    next();
  });
  if (opts.withoutPkce) {
    app.get("/.well-known/oauth-authorization-server", (_req, res) => {
      res.json({ issuer: `${origin}/`, authorization_endpoint: `${origin}/authorize`, token_endpoint: `${origin}/token`, registration_endpoint: `${origin}/register`, response_types_supported: ["code"] });
    });
  }
  // The SDK's token endpoint leaves client_credentials to the application.
  app.post("/token", express.urlencoded({ extended: false }), (req: Request, res: Response, next) => {
    const body = req.body as Record<string, string>;
    seen.token.push({ grant: body.grant_type ?? "", resource: body.resource });
    if (body.grant_type !== "client_credentials") return next();
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const [id, secret] = basic ? Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent) : [body.client_id, body.client_secret];
    const c = id ? clients.get(id) : undefined;
    if (!c || c.client_secret !== secret) return void res.status(401).json({ error: "invalid_client" });
    try {
      res.json(issue({ clientId: c.client_id, scopes: String(body.scope ?? "read").split(" "), resource: checkResource(body.resource ? new URL(body.resource) : undefined) }));
    } catch (err) {
      res.status(400).json({ error: "invalid_target", error_description: (err as Error).message });
    }
  });
  if (opts.legacy) {
    if (opts.legacy === "metadata") {
      app.get("/.well-known/oauth-authorization-server", (_req, res) => {
        res.json({
          issuer: `${origin}/`,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          registration_endpoint: `${origin}/register`,
          response_types_supported: ["code"],
          code_challenge_methods_supported: ["S256"],
        });
      });
    }
    app.use("/authorize", authorizationHandler({ provider }));
    app.use("/token", tokenHandler({ provider }));
    app.use("/register", clientRegistrationHandler({ clientsStore }));
  } else app.use(mcpAuthRouter({ provider, issuerUrl: new URL(origin), resourceServerUrl: mcpUrl, scopesSupported: ["read"] }));

  const resourceMetadataUrl = opts.legacy ? undefined : getOAuthProtectedResourceMetadataUrl(mcpUrl);
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl, expectedResource: mcpUrl, requiredScopes: opts.challengeScopes ?? [] });
  app.post("/mcp", (req, res, next) => {
    res.on("finish", () => {
      if (res.statusCode === 401) seen.refused++;
    });
    bearer(req, res, next);
  }, express.json(), async (req, res) => {
    const body = req.body as { method?: string; params?: { name?: string } };
    if (body.method === "tools/call" && body.params?.name === "admin" && !req.auth!.scopes.includes("admin")) {
      res
        .status(403)
        .set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="read admin",${resourceMetadataUrl ? ` resource_metadata="${resourceMetadataUrl}",` : ""} error_description="admin needs the admin scope"`)
        .json({ error: "insufficient_scope" });
      return;
    }
    const server = new McpServer({ name: "protected", version: "1.0.0" });
    server.registerTool("whoami", { description: "Says who called." }, (extra) => ({
      content: [{ type: "text" as const, text: `authorized with scopes: ${extra.authInfo?.scopes.join(" ")}` }],
    }));
    server.registerTool("admin", { description: "Needs the admin scope." }, () => ({ content: [{ type: "text" as const, text: "admin done" }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.all("/mcp", (_req, res) => void res.status(405).set("Allow", "POST").end());

  return {
    url: mcpUrl.href,
    origin,
    seen,
    get tokenTtlMs() {
      return state.tokenTtlMs;
    },
    set tokenTtlMs(v: number) {
      state.tokenTtlMs = v;
    },
    revokeAll() {
      access.clear();
      refresh.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
