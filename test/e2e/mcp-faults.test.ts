// MCP servers that fail, through a real gateway with its control socket: a server that cannot
// start, one that crashes mid-call, hangs, floods, or changes its tool list.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMcp } from "../../src/cli/mcp.ts";
import { loadConfig } from "../../src/config/config.ts";
import { startGateway, type Gateway } from "../../src/gateway/gateway.ts";
import { gatewayOptions } from "../../src/gateway/setup.ts";
import { silentLogger } from "../../src/process/log.ts";
import { waitFor } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { TestChannel } from "../support/test-channel.ts";

const FAULT = fileURLToPath(new URL("../support/fault-mcp-server.ts", import.meta.url));
const NODE = process.execPath;

let fake: FakeModel;
let home: string;
let gateway: Gateway | undefined;
let channel: TestChannel;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-mcpf-"));
  gateway = undefined;
  channel = new TestChannel();
});
afterEach(async () => {
  await gateway?.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const starts = () => join(home, "starts.txt");
const startCount = () => readFileSync(starts(), "utf8").trim().split("\n").length;

async function start(servers: Record<string, unknown>, backoffMs = 100): Promise<Gateway> {
  // The test channel marks no sender as the owner, so every run here has read "a message from
  // user1" and an untrusted MCP tool would be asked about: these servers are trusted.
  const trusted = Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, { trust: "*", ...(s as object) }]));
  writeFileSync(join(home, "config.json"), JSON.stringify({ mcp: { servers: trusted }, channels: { telegram: { token: "t", ownerIds: ["1"] } } }));
  const config = loadConfig({ home, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url } });
  const opts = gatewayOptions(home, config, silentLogger, { daemon: false });
  gateway = await startGateway({ ...opts, controlSocket: true, channels: [channel], mcpBackoff: { baseMs: backoffMs } });
  await gateway.context.runtime.mcp!.settled();
  return gateway;
}

// Outside the sandbox: the fault server writes its starts into the home, which a sandboxed process cannot see.
const fault = (extra: Record<string, unknown> = {}) => ({ command: NODE, args: [FAULT], env: { FAULT_MCP_STARTS: starts() }, sandbox: false, ...extra });

async function ask(msg = "go"): Promise<string> {
  const id = channel.say({ chat: "1", type: "dm", sender: "1", text: msg });
  await waitFor("the reply", () => channel.replies.has(id), 20_000);
  return channel.replies.get(id)!.at(-1)!;
}

const resultOf = (r: RecordedRequest) => lastUserContent(r).find((b) => b.type === "tool_result")!;

function capture() {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = "";
  let stderr = "";
  out.on("data", (c: Buffer) => (stdout += c.toString()));
  err.on("data", (c: Buffer) => (stderr += c.toString()));
  return { io: { stdout: out, stderr: err }, text: () => ({ stdout, stderr }) };
}

describe("MCP server faults", () => {
  it("a server that crashes at start does not stop the daemon; hearth mcp and /status show its error", async () => {
    const g = await start({ broken: { command: NODE, args: [FAULT, "--crash-at-start"] }, fault: fault() }, 60_000);
    fake.enqueue(toolCall("mcp__fault__echo", { text: "still here" }), text("Fine."));
    expect(await ask()).toBe("Fine.");
    expect(resultOf(fake.requests[1]!).content).toBe("echo: still here");

    const c = capture();
    expect(await runMcp(home, [], c.io)).toBe(1);
    expect(c.text().stdout).toBe(
      "SERVER           STATE     VIA   SCOPE  TOOLS\n" +
        "broken           down      stdio main   0 tools\n" +
        "    last error: the server exited before it was ready: fault server: refusing to start (--crash-at-start)\n" +
        "fault            ready     stdio main   6 tools\n",
    );
    const tools = capture();
    expect(await runMcp(home, ["tools", "fault"], tools.io)).toBe(0);
    expect(tools.text().stdout.split("\n").filter((l) => !l.startsWith(" "))).toEqual(["mcp__fault__big", "mcp__fault__crash", "mcp__fault__echo", "mcp__fault__env", "mcp__fault__grow", "mcp__fault__hang", ""]);

    const id = channel.say({ chat: "1", type: "dm", sender: "1", text: "/status" });
    await waitFor("the status", () => channel.replies.has(id));
    const lines = channel.replies.get(id)![0]!.split("\n");
    expect(lines.filter((l) => l.startsWith("MCP server"))).toEqual(["MCP server broken is down: the server exited before it was ready: fault server: refusing to start (--crash-at-start)"]);
    expect(g.status().mcp.map((v) => v.status)).toEqual(["down", "ready"]);
  });

  it("hearth mcp tools NAME lists the server's tools, resources and prompts, from the daemon or started here", async () => {
    const expected =
      "mcp__fault__big\n    Returns 1 MB of text.\n" +
      "mcp__fault__crash\n    Exits the server in the middle of the call.\n" +
      "mcp__fault__echo\n    Echoes text.\n" +
      "mcp__fault__env\n    Returns an environment variable.\n" +
      "mcp__fault__grow\n    Adds the tool extra.\n" +
      "mcp__fault__hang\n    Never answers.\n" +
      "\nResources (mcp_read_resource reads them):\n" +
      "fault://notes/today\n    today — Today's notes.\n" +
      "fault://notes/plan\n    plan\n" +
      "\nPrompts:\n" +
      "summarize\n    Summarizes the notes.\n";
    const servers = { fault: { command: NODE, args: [FAULT, "--catalog"] } };
    writeFileSync(join(home, "config.json"), JSON.stringify({ mcp: { servers } }));
    const here = capture();
    expect(await runMcp(home, ["tools", "fault"], here.io)).toBe(0);
    expect(here.text()).toEqual({ stdout: expected, stderr: "Hearth is not running: starting the servers here to check them.\n" });
    await start(servers);
    const daemon = capture();
    expect(await runMcp(home, ["tools", "fault"], daemon.io)).toBe(0);
    expect(daemon.text()).toEqual({ stdout: expected, stderr: "" });
  });

  it("a crash mid-call is an error result; the server restarts and the next call works", async () => {
    const g = await start({ fault: fault() });
    fake.enqueue(toolCall("mcp__fault__crash", {}), text("It crashed."));
    expect(await ask()).toBe("It crashed.");
    expect(resultOf(fake.requests[1]!)).toMatchObject({ content: 'The MCP server "fault" exited during the call to crash. Hearth restarts it; try again shortly.', is_error: true });
    await waitFor("the restart", () => g.context.runtime.mcp!.views()[0]!.status === "ready" && startCount() === 2);
    expect(g.context.runtime.mcp!.views()[0]).toMatchObject({ status: "ready", restarts: 1, lastError: "the server exited: fault server: crashing on purpose" });
    fake.enqueue(toolCall("mcp__fault__echo", { text: "again" }), text("Back."));
    expect(await ask()).toBe("Back.");
    expect(resultOf(fake.requests[3]!).content).toBe("echo: again");
    expect(JSON.stringify(fake.requests[3]!.body.tools)).toBe(JSON.stringify(fake.requests[0]!.body.tools));
  });

  it("a hanging call times out and is cancelled; a 1 MB result is truncated", async () => {
    await start({ fault: fault({ timeoutMs: 1500 }) });
    fake.enqueue(toolCall("mcp__fault__hang", {}), toolCall("mcp__fault__big", {}), text("Done."));
    expect(await ask()).toBe("Done.");
    expect(resultOf(fake.requests[1]!)).toMatchObject({ content: 'hang on the MCP server "fault" timed out after 1500 ms and was cancelled.', is_error: true });
    const big = String(resultOf(fake.requests[2]!).content);
    expect(big.length).toBe(30_000);
    expect(big.startsWith("BEGINxxx")).toBe(true);
    expect(big.endsWith("xxxEND")).toBe(true);
    expect(big).toMatch(/\n\n\[… 1,018,\d{3} characters cut …\]\n\n/);
  });

  it("a changed tool list (tools/list_changed) reaches the next request", async () => {
    const g = await start({ fault: fault() });
    fake.enqueue(toolCall("mcp__fault__grow", {}), text("Grown."));
    expect(await ask()).toBe("Grown.");
    await waitFor("the refreshed list", () => g.context.runtime.mcp!.tools().some((t) => t.name === "mcp__fault__extra"));
    fake.enqueue(toolCall("mcp__fault__extra", {}), text("Used it."));
    expect(await ask()).toBe("Used it.");
    const before = (fake.requests[0]!.body.tools as Array<{ name: string }>).map((t) => t.name);
    const after = (fake.requests[2]!.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(after.filter((n) => !before.includes(n))).toEqual(["mcp__fault__extra"]);
    expect(after.filter((n) => n.startsWith("mcp__"))).toEqual(["mcp__fault__big", "mcp__fault__crash", "mcp__fault__echo", "mcp__fault__env", "mcp__fault__extra", "mcp__fault__grow", "mcp__fault__hang"]);
    expect(resultOf(fake.requests[3]!).content).toBe("extra here");
  });

  it("/stop cancels a running MCP call, and the server stays usable", async () => {
    const g = await start({ fault: fault({ timeoutMs: 600_000 }) });
    fake.enqueue(toolCall("mcp__fault__hang", {}));
    const id = channel.say({ chat: "1", type: "dm", sender: "1", text: "wait forever" });
    await fake.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 300));
    channel.say({ chat: "1", type: "dm", sender: "1", text: "/stop" });
    await waitFor("the stopped run", () => channel.replies.has(id), 20_000);
    fake.enqueue(toolCall("mcp__fault__echo", { text: "after stop" }), text("OK."));
    expect(await ask()).toBe("OK.");
    const messages = JSON.stringify(fake.requests[1]!.body.messages);
    expect(messages).toContain(JSON.stringify("Cancelled: the run was stopped while fault ran hang."));
    expect(resultOf(fake.requests[2]!).content).toBe("echo: after stop");
    expect(g.context.runtime.mcp!.views()[0]).toMatchObject({ status: "ready", restarts: 0 });
  });

  it("the server's children end with the gateway", async () => {
    await start({ fault: fault() });
    const pid = Number(readFileSync(starts(), "utf8").trim());
    expect(isAlive(pid)).toBe(true);
    await gateway!.stop();
    gateway = undefined;
    expect(isAlive(pid)).toBe(false);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
