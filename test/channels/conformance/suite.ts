// Runs the conformance scenarios for one channel: one fake model, one home and one daemon for
// the whole file (restarted in place by the crash scenarios), every scenario in order; those the
// channel's capabilities do not allow are reported as skipped, with the reason in their name.
import { afterAll, beforeAll, describe, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../../support/daemon.ts";
import { startFakeModel } from "../../support/fake-model.ts";
import type { FakePlatform, PlatformTraits } from "./platform.ts";
import { prepareHome, scenarios, type Scenario, type Stage } from "./scenarios.ts";

/** The stage the scenarios run on: the daemon started with the platform's channel and the settings the scenarios rely on. */
export async function openStage(platform: FakePlatform): Promise<Stage & { close(): Promise<void> }> {
  const model = await startFakeModel();
  const setup = platform.daemonSetup();
  const home = makeHome({
    channels: setup.channels,
    // Every command is asked about: the approval scenarios need a question; no other scenario runs one.
    approvals: { exec: "always", timeoutSeconds: 300 },
    heartbeat: { every: "0" },
  });
  prepareHome(home);
  const env = { ...setup.env, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url };
  const daemons: Daemon[] = [];
  const start = async () => {
    const d = await startDaemon(home, env);
    daemons.push(d);
    await platform.connected(d);
  };
  await start();
  return {
    platform,
    model,
    home,
    get daemon() {
      return daemons.at(-1)!;
    },
    kill9: async () => {
      const d = daemons.at(-1)!;
      d.proc.kill("SIGKILL");
      await d.exited;
    },
    restart: start,
    close: async () => {
      // Every daemon shares the home: all must be gone before it is removed. The last one
      // stops as it would for its owner, so nothing it started still writes into the home.
      const last = daemons.at(-1)!;
      if (last.proc.exitCode === null && last.proc.signalCode === null) await last.stop().catch(() => undefined);
      for (const d of daemons) await cleanupDaemon(d, undefined);
      await cleanupDaemon(undefined, home);
      await platform.close();
      await model.close();
    },
  };
}

/** Registers the scenarios for a channel whose fake platform `open` makes. */
export function conformanceSuite(name: string, traits: PlatformTraits, open: () => Promise<FakePlatform>, only: readonly Scenario[] = scenarios): void {
  describe(`${name} channel conformance`, () => {
    let stage: Awaited<ReturnType<typeof openStage>> | undefined;
    beforeAll(async () => {
      stage = await openStage(await open());
    });
    afterAll(async () => {
      await stage?.close();
    });
    for (const s of only) {
      const reason = s.skipReason(traits);
      if (reason) it.skip(`${s.name} — skipped: ${reason}`, () => {});
      else it(s.name, () => s.run(stage!));
    }
  });
}
