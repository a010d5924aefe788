// A real gateway in this process for tests and benchmarks: a temporary home, Telegram access
// rules with owner "1", a TestChannel in Telegram's place, and the model at `modelUrl`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../src/config/config.ts";
import type { Config } from "../../src/config/schema.ts";
import { startGateway, type Gateway } from "../../src/gateway/gateway.ts";
import type { Timers } from "../../src/scheduler/engine.ts";
import { gatewayOptions } from "../../src/gateway/setup.ts";
import { silentLogger } from "../../src/process/log.ts";
import { TestChannel } from "./test-channel.ts";

export interface TestGateway {
  gateway: Gateway;
  channel: TestChannel;
  config: Config;
  home: string;
  /** Stops the gateway and removes the home (unless the caller gave its own). */
  stop(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Config keys besides channels.telegram. */
  config?: Record<string, unknown>;
  /** Merged over { token, ownerIds: ["1"] }. */
  telegram?: Record<string, unknown>;
  /** An existing home; otherwise a temporary one is made and removed by stop(). */
  home?: string;
  clock?: () => number;
  /** Open the workspace memory (watcher, index, daily logs); default true, as in the daemon. */
  memory?: boolean;
  /** Start the scheduler (cron jobs, heartbeat) as the daemon does; default false. */
  schedule?: boolean;
  /** The scheduler's timers (a FakeTime). */
  timers?: Timers;
  /** The channel in Telegram's place (a subclass with more capabilities); default a plain TestChannel. */
  channel?: TestChannel;
}

export async function startTestGateway(modelUrl: string, opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "hearth-gw-"));
  const channel = opts.channel ?? new TestChannel();
  const config = parseConfig(
    { ...opts.config, channels: { telegram: { token: "t", ownerIds: ["1"], ...opts.telegram } } },
    { home, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: modelUrl } },
  );
  const base = gatewayOptions(home, config, silentLogger, { daemon: false, ...(opts.clock ? { clock: opts.clock } : {}) });
  const { openMemory: _memory, ...withoutMemory } = base;
  const scheduling = { ...(opts.schedule ? { schedule: true } : {}), ...(opts.timers ? { timers: opts.timers } : {}) };
  const gateway = await startGateway({ ...(opts.memory === false ? withoutMemory : base), channels: [channel], ...scheduling });
  // Readiness does not wait for the watcher's first scan; tests start from a watched workspace
  // (test/memory/memory-before-watching.test.ts covers the moments before).
  await gateway.context.runtime.memory?.watching();
  return {
    gateway,
    channel,
    config,
    home,
    stop: async () => {
      await gateway.stop();
      if (!opts.home) rmSync(home, { recursive: true, force: true });
    },
  };
}
