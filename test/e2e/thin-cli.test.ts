// The CLI is a thin client of the running daemon: commands that only talk to it load the client
// code, never the daemon's graph (gateway, agent, channels, memory). A loader hook in the child
// process records every module it loads.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon;
let home: string;
let hookDir: string;
beforeAll(async () => {
  fake = await startFakeModel();
  home = makeHome({});
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
  hookDir = mkdtempSync(join(tmpdir(), "hearth-hook-"));
  writeFileSync(
    join(hookDir, "record.mjs"),
    `import { registerHooks } from "node:module";
import { appendFileSync } from "node:fs";
registerHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(join(hookDir, "loaded.txt"))}, url + "\\n"); return next(url, context); } });
`,
  );
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
  rmSync(hookDir, { recursive: true, force: true });
});

/** Runs `hearth ARGS` with the recording hook; returns its result and the src/ modules it loaded. */
async function loadedBy(args: string[]) {
  const list = join(hookDir, "loaded.txt");
  writeFileSync(list, "");
  const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, NODE_OPTIONS: `--import ${join(hookDir, "record.mjs")}` });
  const result = await runHearth(args, env);
  const { readFileSync } = await import("node:fs");
  const urls = readFileSync(list, "utf8").split("\n").filter(Boolean);
  const src = urls.filter((u) => u.includes("/src/")).map((u) => u.slice(u.lastIndexOf("/src/") + 1));
  return { result, src, all: urls };
}

const DAEMON_GRAPH = ["src/gateway/gateway.ts", "src/gateway/agent-runtime.ts", "src/agent/loop.ts", "src/memory/memory.ts", "src/channels/telegram/channel.ts", "src/channels/discord/channel.ts", "src/gateway/router.ts"];

describe("commands that talk to the running daemon", () => {
  it("hearth status loads only the client: no gateway, agent, channel or memory module, no dependency", async () => {
    const { result, src, all } = await loadedBy(["status"]);
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith("Hearth is running")).toBe(true);
    for (const m of DAEMON_GRAPH) expect(src).not.toContain(m);
    expect(src).toContain("src/cli/client.ts");
    expect(all.filter((u) => u.includes("/node_modules/"))).toEqual([]);
  });

  it("hearth chat -m talks to the daemon without loading the embedded gateway", async () => {
    fake.enqueue(text("pong"));
    const { result, src } = await loadedBy(["chat", "-m", "ping"]);
    expect(result.stdout).toBe("pong\n");
    expect(result.code).toBe(0);
    for (const m of [...DAEMON_GRAPH, "src/cli/embedded.ts"]) expect(src).not.toContain(m);
  });

  it.each([[["heartbeat", "--now"]], [["pairing", "list"]], [["cron", "list"]]])("hearth %j does not load the daemon's graph", async (args) => {
    fake.enqueue(text("HEARTBEAT_OK"));
    const { result, src } = await loadedBy(args);
    expect(result.code).toBe(0);
    for (const m of [...DAEMON_GRAPH, "src/scheduler/service.ts"]) expect(src).not.toContain(m);
  });
});
