// Readiness never waits for the workspace (issue 19): the watcher's first scan and the index
// build start only once the channels are up, and skills are read again once the watcher covers
// the workspace, for an edit made before it did.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config.ts";
import { startGateway, type Gateway } from "../../src/gateway/gateway.ts";
import { gatewayOptions } from "../../src/gateway/setup.ts";
import { silentLogger } from "../../src/process/log.ts";
import type { MemoryService } from "../../src/memory/memory.ts";
import { TestChannel } from "../support/test-channel.ts";

let gateway: Gateway | undefined;
let home: string | undefined;
afterEach(async () => {
  await gateway?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
  gateway = home = undefined;
});

class RecordingChannel extends TestChannel {
  readonly order: string[];
  constructor(order: string[]) {
    super("telegram");
    this.order = order;
  }
  override async start(onMessage: Parameters<TestChannel["start"]>[0]): Promise<void> {
    this.order.push("channel started");
    await super.start(onMessage);
  }
}

describe("gateway start order", () => {
  it("starts the memory's background work after the channels, and reads skills again once the watcher is ready", async () => {
    home = mkdtempSync(join(tmpdir(), "hearth-order-"));
    const config = parseConfig({ channels: { telegram: { token: "t", ownerIds: ["1"] } } }, { home, env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" } });
    const base = gatewayOptions(home, config, silentLogger, { daemon: false });
    const order: string[] = [];
    let memory: MemoryService | undefined;
    const openMemory = async (): Promise<MemoryService> => {
      const real = await base.openMemory!();
      memory = real;
      return { ...real, startBackground: () => (order.push("memory background"), real.startBackground()) };
    };
    gateway = await startGateway({ ...base, openMemory, channels: [new RecordingChannel(order)] });
    expect(order).toEqual(["channel started", "memory background"]);

    // A skill written before the watcher covered the workspace is listed once it does.
    const skill = join(config.workspace, "skills", "early");
    mkdirSync(skill, { recursive: true });
    writeFileSync(join(skill, "SKILL.md"), "---\nname: early\ndescription: a skill written in the first moments\n---\nDo it.\n");
    await memory!.watching();
    expect(gateway.context.runtime.skills?.list().map((s) => s.name)).toEqual(["early"]);
  });
});
