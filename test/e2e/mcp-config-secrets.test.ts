// Every command reads config.json as `hearth start` does. A hand-written config.json (no
// "version", as the README's examples are) with an MCP server's clientSecret in plain text is
// upgraded by `hearth start`, which moves the secret to .env; `hearth mcp tools|call` without a
// daemon must run the same server with the same secret, and so with the secret in .env.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome } from "../support/daemon.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "../support/oauth-mcp-server.ts";

let srv: OAuthMcpServer;
const homes: string[] = [];
beforeAll(async () => {
  srv = await startOAuthMcpServer({ machineClient: { id: "machine-1", secret: "machine-secret-value-123" } });
});
afterAll(async () => {
  for (const h of homes) await cleanupDaemon(undefined, h);
  await srv.close();
});

const machine = (clientSecret: string) => ({ mcp: { servers: { conf: { url: srv.url, auth: { type: "client_credentials", clientId: "machine-1", clientSecret } } } } });
const TOOLS = "mcp__conf__admin\n    Needs the admin scope.\nmcp__conf__whoami\n    Says who called.\n";
const NO_DAEMON = "Hearth is not running: starting the servers here to check them.\n";

function home(config: unknown, dotEnv?: string): string {
  const h = makeHome(config);
  homes.push(h);
  if (dotEnv !== undefined) writeFileSync(join(h, ".env"), dotEnv, { mode: 0o600 });
  return h;
}

describe("hearth mcp without a daemon reads config.json as start does", () => {
  it("a clientSecret in plain text in a config.json without a version: tools and call run the server", async () => {
    const h = home(machine("machine-secret-value-123"));
    const tools = await runHearth(["mcp", "tools", "conf"], isolatedEnv({ HEARTH_HOME: h }));
    expect(tools.stderr).toBe(NO_DAEMON);
    expect(tools.stdout).toBe(TOOLS);
    expect(tools.code).toBe(0);
    const call = await runHearth(["mcp", "call", "conf", "whoami"], isolatedEnv({ HEARTH_HOME: h }));
    expect(call).toEqual({ code: 0, stdout: "authorized with scopes: read\n", stderr: "" });
    expect(srv.seen.token.filter((t) => t.grant === "client_credentials").length).toBeGreaterThanOrEqual(1);
  });

  it("the secret in .env, as hearth start leaves it: the same", async () => {
    const h = home({ version: 3, ...machine("${HEARTH_MCP_CONF_CLIENT_SECRET}") }, "HEARTH_MCP_CONF_CLIENT_SECRET=machine-secret-value-123\n");
    const tools = await runHearth(["mcp", "tools", "conf"], isolatedEnv({ HEARTH_HOME: h }));
    expect(tools.stderr).toBe(NO_DAEMON);
    expect(tools.stdout).toBe(TOOLS);
    expect(tools.code).toBe(0);
    const list = await runHearth(["mcp"], isolatedEnv({ HEARTH_HOME: h }));
    expect(list).toEqual({ code: 0, stdout: "SERVER           STATE     VIA   SCOPE  TOOLS\nconf             ready     http  main   2 tools\n", stderr: NO_DAEMON });
  });
});
