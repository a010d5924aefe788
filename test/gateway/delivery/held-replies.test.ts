import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChannelStatus, InboundMessage, ReplySink } from "../../../src/channels/channel.ts";
import { HeldReplies, heldNotice, type OpenEntry, type RecordedReply } from "../../../src/gateway/delivery/held-replies.ts";
import { createLogger } from "../../../src/process/log.ts";

const message = (id: string, text: string): InboundMessage => ({
  id,
  channel: "whatsapp",
  chat: { id: "4915111111111", type: "dm", members: ["4915111111111"] },
  sender: { id: "4915111111111", name: "Ann", isOwner: true },
  text,
  addressed: true,
  receivedAt: 0,
});

/** A world of one channel whose state the test sets, an outbox whose deliveries it decides. */
function world(first: ChannelStatus) {
  let status: ChannelStatus = first;
  const entries = new Map<string, OpenEntry>();
  const replies = new Map<string, RecordedReply & { final: { text: string } }>();
  const done: string[] = [];
  const released: string[] = [];
  const told: string[] = [];
  const delivered: string[] = [];
  let drops = 0;
  let refuse = false;
  let attempts = 0;
  const held = new HeldReplies({
    outbox: {
      replyOf: (id) => replies.get(id),
      redeliver: async (reply) => {
        attempts++;
        if (drops > 0) {
          // The channel goes away again while the answer is on its way.
          drops--;
          status = { state: "reconnecting", detail: "again" };
          throw new Error("not connected");
        }
        if (refuse) throw new Error("refused by the platform");
        delivered.push(reply.final.text);
      },
      release: (id) => void released.push(id),
    },
    entry: (id) => entries.get(id),
    markDone: (id) => void done.push(id),
    status: (channel) => (channel === "whatsapp" ? status : undefined),
    openReply: () => ({}) as ReplySink,
    tellOwner: (_from, text) => void told.push(text),
    log: createLogger({ level: "silent" }),
    pollMs: 10,
  });
  const answer = (id: string, text: string, answered: string) => {
    entries.set(id, { id, message: message(id, answered) });
    replies.set(id, { id, final: { text }, delivered: false, messageIds: [] });
  };
  return {
    held,
    answer,
    done,
    released,
    told,
    delivered,
    attempts: () => attempts,
    set: (s: ChannelStatus) => void (status = s),
    dropNext: () => void drops++,
    refuseAll: () => void (refuse = true),
  };
}

describe("answers that wait for their channel", () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it("an answer whose channel is not running waits, its entry open, and goes out once the channel runs; then its entry closes", async () => {
    const w = world({ state: "reconnecting", detail: "lost the connection" });
    stop = () => w.held.stop();
    w.answer("whatsapp:1", "The answer.", "hello");
    w.held.runEnded(["whatsapp:1"]);
    expect(w.done).toEqual([]);
    expect(w.held.waiting()).toBe(1);
    // Not failed: nothing the owner must do, so they are not bothered.
    expect(w.told).toEqual([]);
    w.set({ state: "running" });
    await vi.waitFor(() => expect(w.done).toEqual(["whatsapp:1"]));
    expect(w.delivered).toEqual(["The answer."]);
    expect(w.released).toEqual(["whatsapp:1"]);
    expect(w.held.waiting()).toBe(0);
  });

  it("a failed channel: the owner is told once which answer waits", async () => {
    const w = world({ state: "failed", reason: "WhatsApp logged this device out." });
    stop = () => w.held.stop();
    w.answer("whatsapp:2", "Later.", "what about\n the   rent?");
    w.held.runEnded(["whatsapp:2"]);
    await new Promise((r) => setTimeout(r, 50));
    expect(w.told).toEqual([heldNotice("whatsapp", { state: "failed", reason: "WhatsApp logged this device out." }, "what about the rent?")]);
    expect(w.told[0]).toBe('Not sent yet on whatsapp: the answer to "what about the rent?". whatsapp is not connected (WhatsApp logged this device out); the answer goes out once it is connected again.');
    expect(w.done).toEqual([]);
  });

  it("closes at once an entry whose answer went out, or failed while its channel ran", () => {
    const w = world({ state: "running" });
    stop = () => w.held.stop();
    w.answer("whatsapp:3", "Refused by the platform.", "x");
    w.held.runEnded(["whatsapp:3", "whatsapp:4"]);
    expect(w.done).toEqual(["whatsapp:3", "whatsapp:4"]);
    expect(w.held.waiting()).toBe(0);
  });

  it("a recorded answer after a restart: delivered once its channel runs; one whose channel goes away again on the way waits on", async () => {
    const w = world({ state: "starting" });
    stop = () => w.held.stop();
    const reply = { id: "whatsapp:5", final: { text: "From the record." }, delivered: false, messageIds: [] };
    const entry = { id: "whatsapp:5", message: message("whatsapp:5", "y") };
    await w.held.redeliver(reply, [entry], entry.message);
    expect(w.held.waiting()).toBe(1);
    expect(w.attempts()).toBe(0);
    w.dropNext();
    w.set({ state: "running" });
    await vi.waitFor(() => expect(w.attempts()).toBe(1));
    expect(w.held.waiting()).toBe(1);
    expect(w.done).toEqual([]);
    w.set({ state: "running" });
    await vi.waitFor(() => expect(w.done).toEqual(["whatsapp:5"]));
    expect(w.delivered).toEqual(["From the record."]);
    expect(w.attempts()).toBe(2);
  });

  it("a recorded answer the platform refuses while its channel runs is given up: logged, its entry closed", async () => {
    const w = world({ state: "running" });
    stop = () => w.held.stop();
    w.refuseAll();
    const reply = { id: "whatsapp:6", final: { text: "Refused." }, delivered: false, messageIds: [] };
    const entry = { id: "whatsapp:6", message: message("whatsapp:6", "z") };
    await w.held.redeliver(reply, [entry], entry.message);
    expect(w.done).toEqual(["whatsapp:6"]);
    expect(w.released).toEqual(["whatsapp:6"]);
    expect(w.held.waiting()).toBe(0);
  });
});
