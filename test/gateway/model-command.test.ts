// /model through a real in-process gateway: owner only, per session, persisted.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let gw: TestGateway;
beforeEach(async () => {
  fake = await startFakeModel();
  gw = await startTestGateway(fake.url, {
    memory: false,
    config: { timezone: "UTC", heartbeat: { every: "0" }, model: { fallbacks: ["claude-haiku-5"] } },
    telegram: { groups: { policy: "open", requireMention: false } },
  });
});
afterEach(async () => {
  await gw.stop();
  await fake.close();
});

async function ask(chat: string, sender: string, message: string, type: "dm" | "group" = "group"): Promise<string> {
  const id = gw.channel.say({ chat, type, sender, text: message });
  await waitFor(`a reply to ${message}`, () => gw.channel.replies.has(id), 10_000);
  return gw.channel.replies.get(id)!.join("\n");
}

describe("/model", () => {
  it("only the owner switches; others may only see the model; each conversation keeps its own", async () => {
    expect(await ask("-100", "5", "/model claude-haiku-5")).toBe("Only the owner can change the model.");
    expect(await ask("-100", "5", "/model")).toBe("Model: claude-sonnet-5-5");
    expect(gw.gateway.context.sessions.get("group:telegram:-100")?.model).toBeUndefined();

    expect(await ask("-100", "1", "/model claude-haiku-5")).toBe("Model for this conversation: claude-haiku-5.");
    expect(gw.gateway.context.sessions.get("group:telegram:-100")?.model).toBe("claude-haiku-5");

    fake.enqueue(text("From haiku."), text("From sonnet."));
    expect(await ask("-100", "5", "hello group")).toBe("From haiku.");
    expect(await ask("1", "1", "hello privately", "dm")).toBe("From sonnet.");
    expect(fake.requests.map((r) => r.body.model)).toEqual(["claude-haiku-5", "claude-sonnet-5-5"]);
  });

  it("a chosen model and /voice are on disk once confirmed: a crash right after cannot take them back", async () => {
    const saved = () => (JSON.parse(readFileSync(join(gw.home, "sessions", "index.json"), "utf8")) as { sessions: Record<string, { model?: string; voice?: string }> }).sessions["group:telegram:-100"];
    expect(await ask("-100", "1", "/model claude-haiku-5")).toBe("Model for this conversation: claude-haiku-5.");
    expect(saved()?.model).toBe("claude-haiku-5");
    expect(await ask("-100", "1", "/voice off")).toBe("Spoken answers here: off.");
    expect(saved()?.voice).toBe("off");
    await ask("-100", "1", "/voice auto");
    expect(saved()?.voice).toBeUndefined();
    expect(saved()?.model).toBe("claude-haiku-5");
  });
});
