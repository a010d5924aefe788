// The real daemon with MCP servers: `hearth mcp` asks it, its children end when it stops, and
// when it is killed with -9 they do not outlive it either.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markerPrefixFor } from "../../src/agent/tools/index.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";

const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const FAULT = fileURLToPath(new URL("../support/fault-mcp-server.ts", import.meta.url));

let fake: FakeModel;
let home: string;
let daemon: Daemon | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

/** Pids of server-everything processes whose environment carries this home's marker. */
function markedPids(home: string): number[] {
  const needle = `HEARTH_EXEC_ID=${markerPrefixFor(home)}.mcp-`;
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        // The server's node itself, not the sandbox's bwrap processes around it (their command lines name it too).
        const cmdline = readFileSync(`/proc/${n}/cmdline`).toString("latin1");
        if (!cmdline.startsWith(`${process.execPath}\0`) || !cmdline.includes("server-everything")) return false;
        return readFileSync(`/proc/${n}/environ`).toString("latin1").split("\0").some((e) => e.startsWith(needle));
      } catch {
        return false;
      }
    })
    .map(Number);
}

const start = async () => {
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "sk-ant-test-key-123456", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("the MCP server", () => daemon!.log().includes('"event":"mcp.ready"'), 20_000);
  return daemon;
};

describe.skipIf(process.platform !== "linux")("MCP servers of the real daemon", () => {
  it("hearth mcp asks the daemon; its servers end with it, on SIGTERM and on kill -9", { timeout: 240_000 }, async () => {
    home = makeHome({
      mcp: { servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] }, broken: { command: process.execPath, args: [FAULT, "--crash-at-start"] } } },
    });
    const d = await start();
    // A server that is down is retried with a doubling backoff (1 s, 2 s, 4 s…), and it shows as
    // "starting" while it is retried: ask once its next retry is 16 s away, so that it is "down"
    // all the while the two commands below run, however slow the machine.
    const retryIn = () => [...d.log().matchAll(/"event":"mcp\.down"[^\n]*"server":"broken"[^\n]*"retryInMs":(\d+)/g)].map((m) => Number(m[1]));
    await waitFor("the broken server's retries to space out", () => retryIn().some((ms) => ms >= 16_000), 120_000);
    const r = await d.hearth(["mcp"]);
    expect(r.stdout).toBe(
      "SERVER           STATE     VIA   SCOPE  TOOLS\n" +
        "broken           down      stdio main   0 tools · restarted 4×\n" +
        "    last error: the server exited before it was ready: fault server: refusing to start (--crash-at-start)\n" +
        "everything       ready     stdio main   16 tools\n",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const status = await d.hearth(["status"]);
    expect(status.stdout.split("\n").filter((l) => l.startsWith("MCP server"))).toEqual([
      "MCP server broken is down: the server exited before it was ready: fault server: refusing to start (--crash-at-start)",
    ]);
    const first = markedPids(home);
    expect(first.length).toBe(1);

    await d.stop();
    expect(markedPids(home)).toEqual([]);

    const again = await start();
    const second = markedPids(home);
    expect(second.length).toBe(1);
    again.proc.kill("SIGKILL");
    await again.exited;
    // Its input closed with the daemon: the server leaves on its own (the next start would kill it otherwise).
    await waitFor("the orphaned server to exit", () => markedPids(home).length === 0, 15_000);
  });
});
