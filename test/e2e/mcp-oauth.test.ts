// The real daemon and CLI with an OAuth-protected MCP server: the daemon sends the owner one
// login link instead of going silently down, reconnects once the browser came back;
// `hearth mcp logout` forgets the tokens; `hearth mcp login` prints the link on a line of its
// own, waits for the loopback callback and has the daemon reconnect; `hearth mcp call` prints
// a tool's result. The browser is an HTTP client following the authorization redirect.
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "../support/oauth-mcp-server.ts";

let fake: FakeModel;
let srv: OAuthMcpServer;
let home: string;
let daemon: Daemon | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
  srv = await startOAuthMcpServer();
  home = makeHome({ mcp: { servers: { prot: { url: srv.url } } } });
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await srv.close();
  await fake.close();
});

async function playBrowser(authorizationUrl: string): Promise<number> {
  const consent = await fetch(authorizationUrl, { redirect: "manual" });
  const back = await fetch(consent.headers.get("location")!);
  await back.text();
  return back.status;
}

const LINK = /^http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+$/m;

/** The login links the daemon left for the owner (the terminal's mailbox: no chat is known yet). */
function linksInMailbox(): string[] {
  let text: string;
  try {
    text = readFileSync(join(home, "terminal-mailbox.json"), "utf8");
  } catch {
    return [];
  }
  return [...text.matchAll(/needs you to log in[^"]*?\\n(http:\/\/127\.0\.0\.1:\d+\/authorize\?[^"\\]+)\\n/g)].map((m) => m[1]!);
}

describe("an OAuth-protected MCP server with the real daemon", () => {
  it("the owner gets the login link, the daemon reconnects after it; logout, login and call through the CLI", async () => {
    const d = (daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "sk-ant-test-key-123456", ANTHROPIC_BASE_URL: fake.url }));
    await waitFor("the owner's login link", () => linksInMailbox().length === 1);
    expect((await d.hearth(["status"])).stdout).toContain("MCP server prot needs a login: `");
    expect(await playBrowser(linksInMailbox()[0]!)).toBe(200);
    await waitFor("the server to be ready", () => d.log().includes('"event":"mcp.ready"'));
    const listed = await d.hearth(["mcp"]);
    expect(listed.stdout).toBe("SERVER           STATE     VIA   SCOPE  TOOLS\nprot             ready     http  main   2 tools\n");

    const out = await d.hearth(["mcp", "logout", "prot"]);
    expect(out.stdout).toBe('Logged out of "prot": its tokens and client registration are forgotten.\nHearth reconnected "prot": needs_login (The MCP server "prot" is not authorized: it needs you to log in. Log in with `hearth mcp login prot`.).\n');
    await waitFor("a second login link", () => linksInMailbox().length === 2);

    const login = await withBrowser(d, ["mcp", "login", "prot", "--no-browser"]);
    expect(login).toEqual({
      code: 0,
      stdout: `Open this link in a browser on this machine to log in to "prot":\n${login.link}\nLogged in to "prot".\nHearth reconnected "prot": ready, 2 tools.\n`,
      stderr: "Waiting for the browser to come back…\n",
      link: login.link,
    });

    const call = await d.hearth(["mcp", "call", "prot", "whoami"]);
    expect(call).toEqual({ code: 0, stdout: "authorized with scopes: read\n", stderr: "" });
    const bad = await d.hearth(["mcp", "call", "prot", "nosuch", "{}"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("nosuch");
    expect(statMode(join(home, "mcp-auth", "prot.json"))).toBe(0o600);

    // A call to a server that needs a login logs in first, as `login` does.
    expect((await d.hearth(["mcp", "logout", "prot"])).code).toBe(0);
    const call2 = await withBrowser(d, ["mcp", "call", "prot", "whoami", "--no-browser"]);
    expect(call2.stdout).toBe(`Open this link in a browser on this machine to log in to "prot":\n${call2.link}\nLogged in to "prot".\nauthorized with scopes: read\n`);
    expect(call2.code).toBe(0);
    expect(d.log()).not.toMatch(/at-[0-9a-f-]{36}|rt-[0-9a-f-]{36}/);
  });
});

/** Runs a hearth command that prints a login link, plays the browser for it, and waits for the exit. */
async function withBrowser(d: Daemon, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; link: string }> {
  const child = spawn(process.execPath, [hearthBin, ...args], { env: d.env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  try {
    await waitFor("the login link on stdout", () => LINK.test(stdout));
  } catch (err) {
    child.kill("SIGKILL");
    throw new Error(`${(err as Error).message}\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
  const link = LINK.exec(stdout)![0];
  expect(await playBrowser(link)).toBe(200);
  const code = await exited;
  return { code, stdout, stderr, link };
}

function statMode(path: string): number {
  return statSync(path).mode & 0o777;
}
