// Modes are checked at start: `hearth start` refuses a home whose `.env` (or config.json, or the
// folder itself) other users may open, with one sentence naming `hearth doctor --fix`; doctor
// --fix makes them owner-only, leaves a symbolic link alone (saying so), and the start works.
import { chmodSync, lstatSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHome } from "../../src/config/init.ts";
import { CONFIG_VERSION } from "../../src/config/migrations.ts";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let outside: string;
let daemon: Daemon | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
  outside = mkdtempSync(join(tmpdir(), "hearth-outside-"));
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  await fake.close();
  rmSync(outside, { recursive: true, force: true });
});

describe("modes at start", () => {
  it("start refuses a 644 .env (exit 2, one sentence); doctor --fix repairs it and leaves a symlinked .bak alone; then start runs", async () => {
    const home = makeHome({ version: CONFIG_VERSION, model: { baseUrl: fake.url } });
    initHome(home);
    const env = isolatedEnv({ HEARTH_HOME: home });
    writeFileSync(join(home, ".env"), "ANTHROPIC_API_KEY=sk-ant-modes-test-key\n", { mode: 0o644 });
    chmodSync(join(home, ".env"), 0o644);
    // A copy of an older config that is a link to a file outside the home, which others may read.
    const target = join(outside, "elsewhere.json");
    writeFileSync(target, "{}\n", { mode: 0o644 });
    chmodSync(target, 0o644);
    symlinkSync(target, join(home, "config.json.v1.bak"));

    const refused = await runHearth(["start"], env);
    expect(refused).toEqual({ code: 2, stdout: "", stderr: `hearth: refusing to start: ${join(home, ".env")} (mode 644) is open to other users; \`npx hearth doctor --fix\` makes it owner-only.\n` });

    const fixed = await runHearth(["doctor", "--fix"], env);
    expect(fixed.stdout.slice(0, fixed.stdout.indexOf("\n\n") + 1)).toBe(
      "Fixed:\n" +
        "  ✓ mode: .env was 644, now 600 (owner only)\n" +
        "Not fixed:\n" +
        "  - mode: config.json.v1.bak is a symbolic link; left as it is (its target's mode is not changed through it): replace it with the file itself, or make the target owner-only by hand\n",
    );
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    expect(lstatSync(join(home, "config.json.v1.bak")).isSymbolicLink()).toBe(true);

    daemon = await startDaemon(home, {});
    expect(await daemon.stop()).toBe(0);
  });

  it("start names every open one: the home folder and config.json", async () => {
    const home = makeHome({});
    chmodSync(home, 0o755);
    chmodSync(join(home, "config.json"), 0o640);
    const r = await runHearth(["start"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-modes-test-key" }));
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr: `hearth: refusing to start: ${home} (mode 755) and ${join(home, "config.json")} (mode 640) are open to other users; \`npx hearth doctor --fix\` makes them owner-only.\n`,
    });
    // doctor says the same, with the step for each.
    const checks = (await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-modes-test-key" }))).stdout;
    expect(checks).toContain(`✗ home folder: ${home} is open to other users (mode 755); \`npx hearth start\` refuses to run until it is owner-only\n    fix: chmod 700 ${home} (or \`npx hearth doctor --fix\`)\n`);
    expect(checks).toContain(`✗ config file: ${join(home, "config.json")} is readable by other users (mode 640); \`npx hearth start\` refuses to run until it is owner-only\n`);
    rmSync(home, { recursive: true, force: true });
  });
});
