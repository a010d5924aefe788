// `hearth chat` with a model that is down: the daemon retries it for about half a minute (2, 4, 8
// and 16 s apart) before it gives up. The chat says why at the first retry, not after the last:
// before, the terminal showed nothing at all for those 30 s.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { freePort } from "../support/telegram-emulator.ts";

let daemon: Daemon;
let down: number;
beforeAll(async () => {
  // A port nothing listens on: every request to the model is refused.
  down = await freePort();
  daemon = await startDaemon(makeHome({}), { ANTHROPIC_API_KEY: "sk-ant-test-key-123456", ANTHROPIC_BASE_URL: `http://127.0.0.1:${down}` });
});
afterAll(async () => {
  await cleanupDaemon(daemon);
});

describe("hearth chat with a model that is down", () => {
  it("says the model cannot be reached, and that it is tried again, at the first retry", async () => {
    const child = spawn(process.execPath, [hearthBin, "chat", "-m", "hello"], { env: daemon.env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    try {
      // The first retry comes about 2 s after the refusal; the last attempt after 30.
      await waitFor("the first retry's note", () => daemon.log().includes('"event":"model.retry"') && stderr.includes("Trying again"), 20_000);
      expect(stderr).toMatch(new RegExp(`^\\(Could not reach the model API at http://127\\.0\\.0\\.1:${down} \\([^)]*ECONNREFUSED[^)]*\\)\\. Trying again in [1-3] s…\\)\\n$`));
      expect(stdout).toBe("");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
