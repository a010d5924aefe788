// The MCP authorization flow against an OAuth-protected server built on the SDK's server-side
// auth: discovery, registration, PKCE with S256 and the resource indicator, the loopback
// callback and its state, refresh after expiry, client credentials, step-up on
// insufficient_scope, the scope a 401 names, a 2025-03-26 server without protected-resource
// metadata, and an authorization server without PKCE refused.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpServerSchema, type McpServerConfig } from "../../../src/agent/mcp/config.ts";
import { beginLogin, type LoginStart } from "../../../src/agent/mcp/login.ts";
import { loginText, McpManager } from "../../../src/agent/mcp/manager.ts";
import { McpAuthStore } from "../../../src/agent/mcp/oauth-store.ts";
import { hearthCommand } from "../../../src/process/hearth-command.ts";
import { createLogger } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "../../support/oauth-mcp-server.ts";

let srv: OAuthMcpServer;
let dir: string;
beforeAll(async () => {
  srv = await startOAuthMcpServer({ machineClient: { id: "machine-1", secret: "machine-secret-value-123" } });
  dir = mkdtempSync(join(tmpdir(), "hearth-oauth-"));
});
afterAll(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

const signal = () => new AbortController().signal;

/** Plays the browser: opens the authorization URL, follows its redirect to the loopback callback. */
async function playBrowser(authorizationUrl: string): Promise<{ status: number; body: string }> {
  const consent = await fetch(authorizationUrl, { redirect: "manual" });
  const to = consent.headers.get("location");
  if (!to) throw new Error(`no redirect from the authorization endpoint: ${consent.status} ${await consent.text()}`);
  const back = await fetch(to);
  return { status: back.status, body: await back.text() };
}

function setup(name: string, config: McpServerConfig) {
  const authDir = join(dir, name);
  const lines: string[] = [];
  const needs: Array<string | undefined> = [];
  const log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
  const manager = new McpManager({ config: { servers: { [name]: config } }, log, authDir, backoff: { baseMs: 60_000 } });
  const conn = manager.server(name)!;
  return { store: new McpAuthStore(authDir), manager, conn, lines, needs, authDir };
}

async function loginThroughBrowser(name: string, config: McpServerConfig, store: McpAuthStore): Promise<LoginStart & { type: "redirect" }> {
  const start = await beginLogin({ name, config, store, timeoutMs: 60_000 });
  if (start.type !== "redirect") throw new Error("expected a redirect");
  const page = await playBrowser(start.authorizationUrl);
  expect(page.status).toBe(200);
  expect(page.body).toContain("Hearth is logged in. You can close this tab.");
  expect(await start.done).toEqual({ type: "authorized" });
  return start;
}

describe("logging in to an OAuth-protected MCP server", () => {
  it("with no tokens the server waits for a login; after the login it connects, and a token that expired is refreshed without the owner", async () => {
    const config = mcpServerSchema.parse({ url: srv.url });
    const { store, manager, conn, lines, authDir } = setup("prot", config);
    try {
      manager.start();
      await manager.settled();
      expect(conn.view()).toMatchObject({ status: "needs_login", lastError: 'The MCP server "prot" is not authorized: it needs you to log in. Log in with `hearth mcp login prot`.' });
      expect(srv.seen.registrations).toBe(0);

      srv.tokenTtlMs = 1;
      const start = await loginThroughBrowser("prot", config, store);
      srv.tokenTtlMs = 3_600_000;
      const authorize = srv.seen.authorize.at(-1)!;
      expect(authorize).toEqual({ resource: srv.url, scopes: ["read"], method: "S256" });
      expect(new URL(start.authorizationUrl).searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(srv.seen.token.map((t) => [t.grant, t.resource])).toEqual([["authorization_code", srv.url]]);
      expect(statSync(join(authDir, "prot.json")).mode & 0o777).toBe(0o600);

      await conn.reconnect();
      expect(conn.view().status).toBe("ready");
      expect(srv.seen.token.map((t) => [t.grant, t.resource])).toEqual([["authorization_code", srv.url], ["refresh_token", srv.url]]);
      expect((await conn.call("whoami", {}, signal())).content).toBe("authorized with scopes: read");
      const tokens = store.read("prot", srv.url).tokens!;
      expect(lines.join("\n")).not.toContain(String(tokens.access_token));
    } finally {
      await manager.stop();
    }
  });

  it("a callback without the login's state is refused and the login keeps waiting for the real one", async () => {
    const config = mcpServerSchema.parse({ url: srv.url });
    const store = new McpAuthStore(join(dir, "state"));
    const start = await beginLogin({ name: "state", config, store, timeoutMs: 60_000 });
    if (start.type !== "redirect") throw new Error("expected a redirect");
    const redirect = new URL(start.authorizationUrl).searchParams.get("redirect_uri")!;
    const forged = await fetch(`${redirect}?code=stolen&state=guess`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toBe("This login link is not the one Hearth is waiting for (the state does not match).\n");
    expect((await playBrowser(start.authorizationUrl)).status).toBe(200);
    expect(await start.done).toEqual({ type: "authorized" });
  });

  it("a tool that needs a wider scope asks for a login with the scopes the server named, and works after it", async () => {
    const config = mcpServerSchema.parse({ url: srv.url });
    const { store, manager, conn } = setup("stepup", config);
    try {
      await loginThroughBrowser("stepup", config, store);
      manager.start();
      await manager.settled();
      const refused = await conn.call("admin", {}, signal());
      // Nobody is sent a link here (as in `hearth mcp call`): the message says what to run.
      expect(refused).toEqual({ isError: true, content: `admin on the MCP server "stepup" needs more permission (scope "read admin"). Log in again with \`${hearthCommand()} mcp login stepup\` to grant it, then try again.` });
      expect(store.read("stepup", srv.url).scope).toBe("read admin");
      await loginThroughBrowser("stepup", config, store);
      expect(srv.seen.authorize.at(-1)!.scopes).toEqual(["read", "admin"]);
      await conn.reconnect();
      expect(await conn.call("admin", {}, signal())).toEqual({ content: "admin done" });
    } finally {
      await manager.stop();
    }
  });

  it("a step-up the daemon asks the owner for keeps the server's tools working until the new login is saved", async () => {
    const config = mcpServerSchema.parse({ url: srv.url });
    const authDir = join(dir, "daemon-stepup");
    const store = new McpAuthStore(authDir);
    const sent: string[] = [];
    const lines: string[] = [];
    const log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
    const manager = new McpManager({ config: { servers: { up: config } }, log, authDir, backoff: { baseMs: 60_000 }, notifyOwner: async (t) => void sent.push(t) });
    const conn = manager.server("up")!;
    try {
      await loginThroughBrowser("up", config, store);
      manager.start();
      await manager.settled();
      const before = store.read("up", srv.url).tokens!.access_token;
      expect(await conn.call("admin", {}, signal())).toEqual({ isError: true, content: 'admin on the MCP server "up" needs more permission (scope "read admin"). The owner has been asked to log in again to grant it.' });
      await waitFor("the login link", () => sent.length === 1);
      const link = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?.*)$/m.exec(sent[0]!)![1]!;
      expect(sent[0]).toBe(loginText("up", link));
      // While the owner has not logged in, the tokens that work stay, and so do the tools.
      expect(store.read("up", srv.url).tokens!.access_token).toBe(before);
      expect(conn.view().status).toBe("ready");
      expect((await conn.call("whoami", {}, signal())).content).toBe("authorized with scopes: read");
      expect((await playBrowser(link)).status).toBe(200);
      await waitFor("the new tokens and the reconnection", () => lines.filter((l) => l.includes('"event":"mcp.ready"')).length === 2);
      expect(store.read("up", srv.url).tokens!.access_token).not.toBe(before);
      expect(await conn.call("admin", {}, signal())).toEqual({ content: "admin done" });
      expect(srv.seen.authorize.at(-1)!.scopes).toEqual(["read", "admin"]);
      expect((await conn.call("whoami", {}, signal())).content).toBe("authorized with scopes: read admin");
    } finally {
      await manager.stop();
    }
  });

  it("client_credentials gets a token with the resource indicator and no owner", async () => {
    const config = mcpServerSchema.parse({ url: srv.url, auth: { type: "client_credentials", clientId: "machine-1", clientSecret: "${MACHINE_SECRET}" } });
    const authDir = join(dir, "machine");
    const manager = new McpManager({ config: { servers: { m: config } }, log: createLogger({ level: "silent" }), authDir, env: { MACHINE_SECRET: "machine-secret-value-123" } });
    try {
      manager.start();
      await manager.settled();
      const conn = manager.server("m")!;
      expect(conn.view().status).toBe("ready");
      expect(srv.seen.token.at(-1)).toEqual({ grant: "client_credentials", resource: srv.url });
      expect((await conn.call("whoami", {}, signal())).content).toBe("authorized with scopes: read");
    } finally {
      await manager.stop();
    }
  });
});

describe("an authorization server without PKCE", () => {
  let bare: OAuthMcpServer;
  beforeAll(async () => {
    bare = await startOAuthMcpServer({ withoutPkce: true });
  });
  afterAll(() => bare.close());

  it("is refused with a clear sentence, by a login and by the daemon's connection", async () => {
    const config = mcpServerSchema.parse({ url: bare.url });
    const sentence =
      `The authorization server of the MCP server "nopkce" (${bare.origin}/) does not say it supports PKCE with S256 ` +
      "(code_challenge_methods_supported in its metadata), so Hearth refuses to log in there: the MCP authorization spec requires it.";
    await expect(beginLogin({ name: "nopkce", config, store: new McpAuthStore(join(dir, "nopkce")) })).rejects.toThrow(sentence);
    expect(bare.seen.authorize).toEqual([]);
    const { manager, conn } = setup("nopkce", config);
    try {
      manager.start();
      await manager.settled();
      expect(conn.view()).toMatchObject({ status: "down", lastError: sentence });
    } finally {
      await manager.stop();
    }
  });
});

describe("a server whose 401 names the scope to ask for", () => {
  let named: OAuthMcpServer;
  beforeAll(async () => {
    named = await startOAuthMcpServer({ challengeScopes: ["files:read"] });
  });
  afterAll(() => named.close());

  it("the owner's login link asks for exactly that scope, not the ones its metadata lists, and the tools work after it", async () => {
    const config = mcpServerSchema.parse({ url: named.url });
    const authDir = join(dir, "named");
    const sent: string[] = [];
    const manager = new McpManager({ config: { servers: { named: config } }, log: createLogger({ level: "silent" }), authDir, backoff: { baseMs: 60_000 }, notifyOwner: async (t) => void sent.push(t) });
    const conn = manager.server("named")!;
    try {
      manager.start();
      await waitFor("the login link", () => sent.length === 1);
      const link = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?.*)$/m.exec(sent[0]!)![1]!;
      expect(new URL(link).searchParams.get("scope")).toBe("files:read");
      expect((await playBrowser(link)).status).toBe(200);
      await waitFor("the server to be ready", () => conn.view().status === "ready");
      expect(named.seen.authorize).toEqual([{ resource: named.url, scopes: ["files:read"], method: "S256" }]);
      expect((await conn.call("whoami", {}, signal())).content).toBe("authorized with scopes: files:read");
    } finally {
      await manager.stop();
    }
  });
});

describe.each([
  ["its authorization server metadata at its origin", "metadata"],
  ["only the default /authorize, /token and /register at its origin", "endpoints"],
] as const)("a 2025-03-26 server without protected-resource metadata, with %s", (_what, legacy) => {
  let old: OAuthMcpServer;
  beforeAll(async () => {
    old = await startOAuthMcpServer({ legacy });
  });
  afterAll(() => old.close());

  it("logs in there, and the tools work after it", async () => {
    const config = mcpServerSchema.parse({ url: old.url });
    const { store, manager, conn } = setup(`old-${legacy}`, config);
    try {
      const start = await loginThroughBrowser(`old-${legacy}`, config, store);
      expect(start.authorizationUrl.startsWith(`${old.origin}/authorize?`)).toBe(true);
      expect(old.seen.registrations).toBe(1);
      expect(old.seen.authorize).toEqual([{ resource: old.url, scopes: [], method: "S256" }]);
      expect(old.seen.token.map((t) => [t.grant, t.resource])).toEqual([["authorization_code", old.url]]);
      manager.start();
      await manager.settled();
      expect(conn.view().status).toBe("ready");
      expect((await conn.call("whoami", {}, signal())).content).toBe("authorized with scopes: read");
    } finally {
      await manager.stop();
    }
  });
});
