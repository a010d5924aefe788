// The suite can fail: the Telegram fake platform wrapped in a broken adapter that shows an answer
// twice — always, or only once the daemon was restarted after a crash (a channel that delivers
// again what it had delivered) — makes the scenarios that judge it throw. The same scenarios pass
// on the same daemon through the honest adapter first, so the failure is the break's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BotMessage, ChatRef, FakePlatform } from "./platform.ts";
import { ownerDm } from "./platform.ts";
import { scenario } from "./scenarios.ts";
import { openStage } from "./suite.ts";
import { startTelegramPlatform } from "./telegram.ts";

type Break = "none" | "always" | "after a restart";

/**
 * The platform, but each message of the bot's is reported twice while `mode` says so ("after a
 * restart": the messages that are new, or changed, since a daemon died).
 */
function duplicating(inner: FakePlatform): FakePlatform & { mode: Break } {
  /** The owner's chat as it was when the last daemon died (id → text); undefined before any died. */
  let atDeath: Map<string, string> | undefined;
  const twice = (m: BotMessage): BotMessage[] => [m, { ...m, id: `${m.id}-again` }];
  const wrapper: FakePlatform & { mode: Break } = {
    ...inner,
    mode: "none",
    async connected(d) {
      void d.exited.then(() => (atDeath = new Map(inner.botMessages(ownerDm(inner)).map((m) => [m.id, m.text]))));
      await inner.connected(d);
    },
    botMessages(chat: ChatRef) {
      const messages = inner.botMessages(chat);
      if (wrapper.mode === "always") return messages.flatMap(twice);
      if (wrapper.mode === "after a restart" && atDeath) return messages.flatMap((m) => (atDeath!.get(m.id) === m.text ? [m] : twice(m)));
      return messages;
    },
  };
  return wrapper;
}

/** What the failed assertion of the scenario saw (not a timeout: an assertion on what a person sees). */
async function failureOf(run: Promise<void>): Promise<unknown> {
  const error = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(error instanceof Error)) throw new Error("the scenario passed on the broken adapter");
  if (!("actual" in error)) throw error;
  return error.actual;
}

describe("a broken channel adapter fails the conformance scenarios", () => {
  let platform: ReturnType<typeof duplicating>;
  let stage: Awaited<ReturnType<typeof openStage>>;
  beforeAll(async () => {
    platform = duplicating(await startTelegramPlatform());
    stage = await openStage(platform);
  });
  afterAll(async () => {
    await stage?.close();
  });

  it("the honest adapter passes 'answered once' and the crash before delivery", async () => {
    platform.mode = "none";
    await scenario.ownerAnsweredOnce.run(stage);
    await scenario.crashBeforeDelivery.run(stage);
  });

  it("an adapter that delivers every answer twice fails 'the owner's DM is answered once'", async () => {
    platform.mode = "always";
    const failure = await failureOf(scenario.ownerAnsweredOnce.run(stage));
    expect(failure).toEqual(["Hello Ann, here is your answer.", "Hello Ann, here is your answer."]);
  });

  it("an adapter that delivers again after a crash fails 'kill -9 between the answer and its delivery'", async () => {
    platform.mode = "after a restart";
    const failure = await failureOf(scenario.crashBeforeDelivery.run(stage));
    expect(failure).toEqual(["Delivered exactly once after the crash (2).", "Delivered exactly once after the crash (2)."]);
  });
});
