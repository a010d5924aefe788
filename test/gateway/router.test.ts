// The router in a real in-process gateway: what is refused before it can cost anything.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/channel.ts";
import { parseConfig } from "../../src/gateway/config.ts";
import { startGateway, type Gateway } from "../../src/gateway/gateway.ts";
import { MAX_MESSAGE_CHARS } from "../../src/gateway/router.ts";
import { silentLogger } from "../../src/log.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { TestChannel } from "../support/test-channel.ts";

let fake: FakeModel;
let home: string;
let gateway: Gateway;
let channel: TestChannel;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-router-"));
  channel = new TestChannel();
  const config = parseConfig({ channels: { telegram: { token: "t", ownerIds: ["1"] } } }, { home, env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
  gateway = await startGateway({ home, config, log: silentLogger, controlSocket: false, channels: [channel] });
});
afterEach(async () => {
  await gateway.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const dm = (id: string, text: string): InboundMessage => ({
  id,
  channel: "telegram",
  chat: { id: "1", type: "dm" },
  sender: { id: "1", name: "Owner", isOwner: true },
  text,
  addressed: true,
  receivedAt: Date.now(),
});

describe("router", () => {
  it("refuses a 1 MB message with a clear answer, no model call and nothing in the inbox", async () => {
    gateway.deliver(dm("big", "x".repeat(1024 * 1024)));
    await waitFor("the refusal", () => channel.replies.has("big"));
    expect(channel.replies.get("big")![0]).toMatch(/too long for me \(1,048,576 characters; the limit is 100,000\)/);
    expect(MAX_MESSAGE_CHARS).toBe(100_000);
    expect(fake.requests).toHaveLength(0);
    expect(gateway.context.inbox.pending()).toEqual([]);
  });

  it("answers a platform message delivered twice only once", async () => {
    fake.enqueue(text("Once."), text("Twice?"));
    gateway.deliver(dm("m1", "hello"));
    gateway.deliver(dm("m1", "hello"));
    await waitFor("the answer", () => channel.replies.has("m1"));
    await new Promise((r) => setTimeout(r, 200));
    expect(channel.replies.get("m1")).toEqual(["Once."]);
    expect(fake.requests).toHaveLength(1);
  });
});
