// `hearth mcp call` at the owner's terminal, no daemon running, against a server whose tool needs
// more scope than the first login granted (a 403 naming it: step-up). The owner is there, so the
// call logs in again for the wider scope, as the first login did, and makes the call once more;
// before, it printed the 403's sentence and exited 1 with nothing to do but run it again.
// The browser is an HTTP client following each authorization redirect once.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome } from "../support/daemon.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "../support/oauth-mcp-server.ts";

let srv: OAuthMcpServer;
let home: string;
beforeAll(async () => {
  srv = await startOAuthMcpServer();
  home = makeHome({ mcp: { servers: { prot: { url: srv.url } } } });
});
afterAll(async () => {
  await cleanupDaemon(undefined, home);
  await srv.close();
});

const LINK = /^http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+$/gm;

async function playBrowser(authorizationUrl: string): Promise<void> {
  const consent = await fetch(authorizationUrl, { redirect: "manual" });
  await (await fetch(consent.headers.get("location")!)).text();
}

describe("hearth mcp call with no daemon, a tool that needs more scope", () => {
  it("logs in, is refused for the scope, logs in again for it and prints the tool's result", async () => {
    const child = spawn(process.execPath, [hearthBin, "mcp", "call", "prot", "admin", "--no-browser"], {
      env: isolatedEnv({ HEARTH_HOME: home }),
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let browsed = 0;
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
      const links = [...stdout.matchAll(LINK)].map((m) => m[0]);
      for (const link of links.slice(browsed)) void playBrowser(link);
      browsed = links.length;
    });
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      const code = await exited;
      const [first, second] = [...stdout.matchAll(LINK)].map((m) => m[0]);
      expect({ code, stdout, stderr }).toEqual({
        code: 0,
        stdout: `Open this link in a browser on this machine to log in to "prot":\n${first}\nLogged in to "prot".\nOpen this link in a browser on this machine to log in to "prot":\n${second}\nLogged in to "prot".\nadmin done\n`,
        stderr: `Waiting for the browser to come back…\nadmin on the MCP server "prot" needs more permission (scope "read admin"): log in again to grant it.\nWaiting for the browser to come back…\n`,
      });
      expect(new URL(second!).searchParams.get("scope")).toBe("read admin");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
