import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Channel, ChannelId, ChannelStatus, InboundMessage, PlatformCommand, ReplySink } from "../../../src/channels/channel.ts";
import { ChannelRegistry } from "../../../src/gateway/delivery/channel-registry.ts";
import { registerSecret, silentLogger } from "../../../src/process/log.ts";

function fakeChannel(id: ChannelId, start: () => Promise<void>): Channel & { starts: number } {
  const ch = {
    id,
    starts: 0,
    start: async () => {
      ch.starts++;
      await start();
    },
    stop: async () => {},
    status: (): ChannelStatus => ({ state: "running" }),
    openReply: () => ({}) as ReplySink,
    send: async () => {},
  };
  return ch;
}

const retryable = (message: string) => Object.assign(new Error(message), { retryable: true });

describe("ChannelRegistry", () => {
  it("does not let a slow channel hold back readiness", async () => {
    const reg = new ChannelRegistry(silentLogger);
    reg.register(fakeChannel("discord", () => sleep(5_000)));
    const t0 = Date.now();
    await reg.startAll(() => {}, { waitMs: 100 });
    expect(Date.now() - t0).toBeLessThan(2_000);
    await reg.stopAll();
  });

  it("retries a temporary start failure and shows it as reconnecting meanwhile", async () => {
    let fail = true;
    const reg = new ChannelRegistry(silentLogger, { retryBaseMs: 50 });
    const ch = fakeChannel("discord", async () => {
      if (fail) throw retryable("Discord is unreachable");
    });
    reg.register(ch);
    await reg.startAll(() => {}, { waitMs: 1_000 });
    expect(reg.status("discord")).toMatchObject({ state: "reconnecting" });
    fail = false;
    for (let i = 0; i < 100 && reg.status("discord").state !== "running"; i++) await sleep(20);
    expect(reg.status("discord")).toEqual({ state: "running" });
    expect(ch.starts).toBe(2);
    await reg.stopAll();
  });

  it("does not retry a permanent failure such as a bad token", async () => {
    const reg = new ChannelRegistry(silentLogger, { retryBaseMs: 10 });
    const ch = fakeChannel("telegram", async () => {
      throw new Error("Telegram rejected the bot token (401 Unauthorized).");
    });
    reg.register(ch);
    await reg.startAll(() => {}, { waitMs: 1_000 });
    await sleep(100);
    expect(reg.status("telegram")).toEqual({ state: "failed", reason: "Telegram rejected the bot token (401 Unauthorized)." });
    expect(ch.starts).toBe(1);
    await reg.stopAll();
  });
});

describe("ChannelRegistry redaction", () => {
  it("replaces a registered secret in every text a chat receives", async () => {
    const secret = "sk-ant-registry-secret-1122334455";
    registerSecret(secret);
    const seen: string[] = [];
    const sink: ReplySink = {
      textDelta: (t) => void seen.push(`delta:${t}`),
      textReset: (t) => void seen.push(`reset:${t}`),
      toolStarted: (name, summary) => void seen.push(`tool:${name}:${summary}`),
      toolFinished: (name, ok) => void seen.push(`done:${name}:${ok}`),
      finish: async (t) => void seen.push(`finish:${t}`),
      fail: async (m) => void seen.push(`fail:${m}`),
    };
    const ch = { ...fakeChannel("telegram", async () => {}), openReply: () => sink, send: async (_to: unknown, t: string) => void seen.push(`send:${t}`) };
    const reg = new ChannelRegistry(silentLogger);
    reg.register(ch);
    await reg.startAll(() => {});
    const reply = reg.openReply({ channel: "telegram", chatId: "1" });
    reply.textDelta(`a ${secret}`);
    reply.textReset(`b ${secret}`);
    reply.toolStarted("exec", `echo ${secret}`);
    reply.toolFinished("exec", true);
    await reply.finish(`c ${secret}`);
    await reply.fail(`d ${secret}`);
    await reg.send({ channel: "telegram", chatId: "1" }, `e ${secret}`);
    expect(seen).toEqual([
      "delta:a [redacted]",
      "reset:b [redacted]",
      "tool:exec:echo [redacted]",
      "done:exec:true",
      "finish:c [redacted]",
      "fail:d [redacted]",
      "send:e [redacted]",
    ]);
    await reg.stopAll();
  });

  it("redacts a platform command's answer (a Discord slash command's)", async () => {
    const secret = "sk-ant-registry-secret-6677889900";
    registerSecret(secret);
    const answered: string[] = [];
    let deliver: ((c: PlatformCommand) => void) | undefined;
    const ch = {
      ...fakeChannel("discord", async () => {}),
      start: async (_m: unknown, onCommand?: (c: PlatformCommand) => void) => void (deliver = onCommand),
    };
    const reg = new ChannelRegistry(silentLogger);
    reg.register(ch);
    await reg.startAll(() => {}, { onCommand: (c) => void c.answer(`the key is ${secret}`) });
    deliver!({ message: { text: "/status" } as InboundMessage, answer: async (t) => void answered.push(t) });
    expect(answered).toEqual(["the key is [redacted]"]);
    await reg.stopAll();
  });
});
