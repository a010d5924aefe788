// The router in a real in-process gateway: what is refused before it can cost anything.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/channel.ts";
import type { Gateway } from "../../src/gateway/gateway.ts";
import { MAX_MESSAGE_CHARS } from "../../src/gateway/router.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import type { TestChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let test: TestGateway;
let gateway: Gateway;
let channel: TestChannel;
beforeEach(async () => {
  fake = await startFakeModel();
  test = await startTestGateway(fake.url, { memory: false });
  ({ gateway, channel } = test);
});
afterEach(async () => {
  await test.stop();
  await fake.close();
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
