// `hearth doctor --online` for Signal: one `version` call to the running signal-cli, or what to
// start when it does not answer.
import { rmSync } from "node:fs";
import { afterEach, beforeEach, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome } from "../support/daemon.ts";
import { startFakeSignalCli, type FakeSignalCli } from "../support/fake-signal-cli.ts";

let signal: FakeSignalCli;
let home: string;
beforeEach(async () => {
  signal = await startFakeSignalCli();
  home = makeHome({ channels: { signal: { httpUrl: signal.url, account: signal.account, ownerIds: ["+4915111111111"] } } });
});
afterEach(async () => {
  await signal.close();
  rmSync(home, { recursive: true, force: true });
});

const doctor = async () => {
  const r = await runHearth(["doctor", "--online"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "ant-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }), { timeoutMs: 40_000 });
  const lines = r.stdout.split("\n");
  return lines.slice(lines.findIndex((l) => l.slice(2).startsWith("signal online:"))).slice(0, 2);
};

it("says which signal-cli answers, with one version call", async () => {
  const host = new URL(signal.url).host;
  expect((await doctor())[0]).toBe(`✓ signal online: signal-cli 0.13.22 answers at ${host}`);
  expect(signal.calls.map((c) => c.method)).toEqual(["version"]);
});

it("a signal-cli that does not answer: the problem and the command that starts it", async () => {
  const host = new URL(signal.url).host;
  await signal.stop();
  expect(await doctor()).toEqual([
    `✗ signal online: signal-cli cannot be reached at ${host} (ECONNREFUSED)`,
    `    fix: start it: signal-cli -a ${signal.account} daemon --http ${host} --receive-mode on-connection`,
  ]);
});
