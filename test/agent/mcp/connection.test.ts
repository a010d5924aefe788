// One MCP server's process: its environment (no Hearth secrets, configured ${VAR}s, never
// logged), a hung start that neither delays nor blocks shutdown, and orphans of a killed daemon.
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { mcpServerSchema } from "../../../src/agent/mcp/config.ts";
import { McpManager } from "../../../src/agent/mcp/manager.ts";
import { killOrphanedCommands, markerPrefixFor } from "../../../src/agent/tools/index.ts";
import { createLogger, registerSecret } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";

const FAULT = fileURLToPath(new URL("../../support/fault-mcp-server.ts", import.meta.url));
const NODE = process.execPath;
const server = (raw: Record<string, unknown>) => mcpServerSchema.parse(raw);

const managers: McpManager[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function logCapture() {
  const lines: string[] = [];
  return { log: createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } }), lines };
}

function manager(servers: Record<string, ReturnType<typeof server>>, env: NodeJS.ProcessEnv, log = logCapture().log, markerPrefix?: string): McpManager {
  const m = new McpManager({ config: { servers }, log, env, ...(markerPrefix ? { markerPrefix } : {}), backoff: { baseMs: 60_000 } });
  managers.push(m);
  return m;
}

const call = async (m: McpManager, name: string, input: Record<string, unknown>) =>
  m.tools().find((t) => t.name === name)!.execute(input, { signal: new AbortController().signal } as never);

describe("a stdio server's environment", () => {
  it("is the daemon's minus Hearth's secrets, plus its env with ${VAR} expanded, and the values are never logged", async () => {
    const apiKey = "sk-ant-api03-never-pass-this-on";
    registerSecret(apiKey);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ANTHROPIC_API_KEY: apiKey, TELEGRAM_BOT_TOKEN: "123456:telegram-token-value", COPY_OF_KEY: apiKey, GITHUB_TOKEN: "ghp_expanded_value_0123456789", PLAIN: "kept" };
    const { log, lines } = logCapture();
    const m = manager({ tools: server({ command: NODE, args: [FAULT], env: { GH: "${GITHUB_TOKEN}", MODE: "fixed" } }) }, env, log);
    m.start();
    await m.settled();
    const ask = async (name: string) => (await call(m, "mcp__tools__env", { name })).content;
    expect(await ask("ANTHROPIC_API_KEY")).toBe("ANTHROPIC_API_KEY is not set");
    expect(await ask("TELEGRAM_BOT_TOKEN")).toBe("TELEGRAM_BOT_TOKEN is not set");
    expect(await ask("COPY_OF_KEY")).toBe("COPY_OF_KEY is not set");
    expect(await ask("PLAIN")).toBe("PLAIN=kept");
    expect(await ask("GH")).toBe("GH=ghp_expanded_value_0123456789");
    expect(await ask("MODE")).toBe("MODE=fixed");
    expect(lines.join("\n")).not.toContain("ghp_expanded_value_0123456789");
    expect(lines.some((l) => l.includes('"event":"mcp.ready"'))).toBe(true);
  });

  it("an unset ${VAR} keeps the server down with an error that names it", async () => {
    const m = manager({ gh: server({ command: NODE, args: [FAULT], env: { TOKEN: "${NOT_SET_ANYWHERE}" } }) }, { PATH: process.env.PATH });
    m.start();
    await m.settled();
    expect(m.views()).toEqual([
      { name: "gh", transport: "stdio", scope: "main", status: "down", tools: [], restarts: 0, lastError: "mcp.servers.gh.env.TOKEN uses ${NOT_SET_ANYWHERE}, which is not set in the daemon's environment" },
    ]);
  });
});

describe("start and shutdown", () => {
  it("a server that never answers delays neither the others nor stop()", async () => {
    const m = manager(
      { mute: server({ command: NODE, args: ["-e", "setInterval(() => {}, 1000)"], timeoutMs: 600_000 }), ok: server({ command: NODE, args: [FAULT] }) },
      process.env,
    );
    m.start();
    await waitFor("the working server", () => m.views()[1]!.status === "ready", 15_000);
    expect(m.views()[0]!.status).toBe("starting");
    // Would wait for the 10-minute handshake timeout (and fail the test) if stop() did not end the handshake.
    await m.stop();
    expect(m.views().map((v) => v.status)).toEqual(["stopped", "stopped"]);
  });

  it("a server left behind by a daemon killed with -9 is found and killed at the next start", async () => {
    const home = mkdtempSync(join(tmpdir(), "hearth-mcp-orphan-"));
    dirs.push(home);
    const startsFile = join(home, "starts");
    const prefix = markerPrefixFor(home);
    const m = manager({ f: server({ command: NODE, args: [FAULT], env: { FAULT_MCP_STARTS: startsFile } }) }, process.env, undefined, prefix);
    m.start();
    await m.settled();
    const pid = Number(readFileSync(startsFile, "utf8").trim());
    // The daemon "dies" without stopping it: only the next start's sweep can end it.
    managers.splice(managers.indexOf(m), 1);
    expect(killOrphanedCommands(prefix)).toBe(1);
    await waitFor("the orphan to die", () => !alive(pid));
    await m.stop();
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
