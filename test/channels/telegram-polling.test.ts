// The poller confirms a batch to Telegram by asking for the next one: it must first wait for
// what the channel says is not on disk yet (a message whose files are downloading).
import { describe, expect, it } from "vitest";
import { UpdatePoller } from "../../src/channels/telegram-polling.ts";
import { silentLogger } from "../../src/log.ts";

type Supply = UpdatePoller["supply"];
type Signal = Parameters<Supply>[1];

function poller(settle: (signal: AbortSignal) => Promise<void>, calls: string[]) {
  return new UpdatePoller({
    api: {
      getUpdates: async (params: { offset?: number }) => {
        calls.push(`getUpdates offset=${params.offset ?? 0}`);
        return [{ update_id: 7 }] as never;
      },
    },
    longPollSeconds: 30,
    idlePollMs: 1,
    idlePollMaxMs: 1,
    backoff: { initialMs: 1, maxMs: 1 },
    log: silentLogger,
    token: "123:abc",
    onStatus: () => {},
    settle,
  });
}

describe("UpdatePoller", () => {
  it("asks for the next batch (confirming the last one) only after settle resolved", async () => {
    const calls: string[] = [];
    let release!: () => void;
    const p = poller(() => {
      calls.push("settle");
      return new Promise<void>((resolve) => (release = () => (calls.push("stored"), resolve())));
    }, calls);
    const signal = new AbortController().signal as unknown as Signal;
    const first = p.supply(100, signal);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(["settle"]);
    release();
    expect(await first).toEqual([{ update_id: 7 }]);
    expect(calls).toEqual(["settle", "stored", "getUpdates offset=0"]);
  });

  it("passes its abort signal to settle, so stopping never waits for a download", async () => {
    const calls: string[] = [];
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const p = poller((signal) => {
      seen = signal;
      return new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    }, calls);
    const pending = p.supply(100, controller.signal as unknown as Signal);
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await pending.catch(() => {});
    expect(seen?.aborted).toBe(true);
  });

  it("while an album is held, asks again from its first update (confirming nothing after it) and hands out only new updates", async () => {
    const calls: number[] = [];
    // Telegram's behaviour: everything from the offset on that was not confirmed.
    const pending = [{ update_id: 10 }, { update_id: 11 }];
    let hold: number | undefined;
    const p = new UpdatePoller({
      api: {
        getUpdates: async (params: { offset?: number }) => {
          const offset = params.offset ?? 0;
          calls.push(offset);
          return pending.filter((u) => u.update_id >= offset) as never;
        },
      },
      longPollSeconds: 30,
      idlePollMs: 1,
      idlePollMaxMs: 1,
      backoff: { initialMs: 1, maxMs: 1 },
      log: silentLogger,
      token: "123:abc",
      onStatus: () => {},
      holdFrom: () => hold,
    });
    const signal = new AbortController().signal as unknown as Signal;
    expect(await p.supply(100, signal)).toEqual([{ update_id: 10 }, { update_id: 11 }]);
    hold = 10; // update 10 is an album part not accepted yet
    expect(await p.supply(100, signal)).toEqual([]);
    pending.push({ update_id: 12 });
    expect(await p.supply(100, signal)).toEqual([{ update_id: 12 }]);
    hold = undefined; // accepted: the next call confirms everything handed out
    expect(await p.supply(100, signal)).toEqual([]);
    expect(calls).toEqual([0, 10, 10, 13]);
  });
});
