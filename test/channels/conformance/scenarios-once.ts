// The conformance scenarios about a message that must be taken once and answered once: a crash
// the instant after the platform handed a message over, one between a part's sending and the
// platform's answer to it (at the chosen instant, and at a random moment of a long answer's
// delivery), and a device logged out while an answer is being written. Run by every channel
// whose platform can show them (PlatformTraits), after the other crash scenarios.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { splitMessage } from "../../../src/channels/chunk.ts";
import { inboxSettled, waitFor } from "../../support/daemon.ts";
import { text } from "../../support/fake-model.ts";
import { ownerDm, type BotMessage, type ChatRef, type FakePlatform, type PlatformTraits } from "./platform.ts";
import type { Scenario, Stage } from "./scenarios.ts";

/** The bot's complete messages that were not in the chat when it was called. */
function freshIn(p: FakePlatform, chat: ChatRef): () => BotMessage[] {
  const seen = new Set(p.botMessages(chat).map((m) => m.id));
  return () => p.botMessages(chat).filter((m) => !seen.has(m.id) && !m.interrupted);
}

const settled = (stage: Stage) => waitFor("every accepted message's outcome to be recorded", () => inboxSettled(stage.home));

/** Paragraphs of plain words tagged `tag` (so no earlier answer matches), about `length` characters. */
function taggedAnswer(tag: string, length: number): string {
  const paragraphs: string[] = [];
  for (let i = 1, total = 0; total < length; i++) {
    const p = `Part ${i} of the ${tag} answer: ${"a sentence that goes out exactly once, whatever happens ".repeat(5).trim()}.`;
    paragraphs.push(p);
    total += p.length + 2;
  }
  return paragraphs.join("\n\n");
}

/** The parts a platform shows a long answer in (the split at its limit, between paragraphs). */
const partsOf = (answer: string, p: FakePlatform): string[] => splitMessage(answer, p.capabilities.maxMessageLength);

const sameAfterCrash = (t: PlatformTraits) => (t.sameAfterCrash === true ? undefined : (t.sameAfterCrash ?? "the fake platform cannot take a delivery and hold back its answer"));

/** Waits until the chat shows exactly `parts`, in order, each once. */
async function shownOnce(stage: Stage, fresh: () => BotMessage[], parts: string[], moment: string): Promise<void> {
  const shown = () => fresh().map((m) => m.text.trim());
  await waitFor(`every part of the answer (${moment})`, () => parts.every((part) => shown().includes(part)));
  await settled(stage);
  expect(shown(), moment).toEqual(parts);
}

let crashes = 0;

const crashBeforeTheAnswer: Scenario = {
  name: "kill -9 after a part of a long answer reached the platform and before the platform answered: after the restart every part shows once",
  skipReason: sameAfterCrash,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = taggedAnswer(`held (${++crashes})`, Math.round(p.capabilities.maxMessageLength * 2.3));
    const parts = partsOf(answer, p);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const fresh = freshIn(p, chat);
    const requests = model.requests.length;
    model.enqueue(text(answer, { chunkSize: 700, chunkDelayMs: 20 }));
    // The second part: the first may be an edit of the preview, which is the same edit again.
    const held = p.holdAnswer!(parts[1]!);
    await p.send(chat, p.person("owner"), `conformance: a long answer across a crash ${crashes}`);
    await held;
    await stage.kill9();
    expect(fresh().map((m) => m.text.trim()).filter((t) => t === parts[1]), "the held part shows before the crash").toHaveLength(1);
    await stage.restart();
    await shownOnce(stage, fresh, parts, "killed before the platform answered the second part");
    // Its final text was recorded before it went out: delivered from the record, not run again.
    expect(model.requests).toHaveLength(requests + 1);
  },
};

const crashDuringTheParts: Scenario = {
  name: "kill -9 at a random moment of a long answer's delivery: after the restart every part shows once",
  skipReason: sameAfterCrash,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = taggedAnswer(`random (${++crashes})`, Math.round(p.capabilities.maxMessageLength * 3.3));
    const parts = partsOf(answer, p);
    const fresh = freshIn(p, chat);
    // Every run of the message gets the same answer (a preview that happened to show the first
    // part whole could let the kill come before the final text was recorded).
    model.setDefault(text(answer, { chunkSize: 2_000, chunkDelayMs: 10 }));
    try {
      await p.send(chat, p.person("owner"), `conformance: a long answer across a random crash ${crashes}`);
      // The delivery has begun once a first part shows whole; the kill comes at a moment chosen
      // at random after that, while the later parts go out (or after the last).
      await waitFor("the first part of the answer", () => fresh().some((m) => m.text.trim() === parts[0]));
      const moment = Math.floor(Math.random() * 400);
      await sleep(moment);
      await stage.kill9();
      await stage.restart();
      await shownOnce(stage, fresh, parts, `killed ${moment} ms after the first part showed`);
    } finally {
      model.setDefault(null);
    }
  },
};

const logoutWithAnswerPending: Scenario = {
  name: "the device is logged out while an answer is written: it is sent once after the device is linked again, with no second model call",
  skipReason: (t) => (t.logsOut ? undefined : "the platform cannot log the bot's device out"),
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = "Written while you were logged out, sent once you linked again.";
    const fresh = freshIn(p, chat);
    const requests = model.requests.length;
    model.enqueue(text(answer, { headDelayMs: 1_500 }));
    await p.send(chat, p.person("owner"), "conformance: answer me across a logout");
    await model.waitForRequests(requests + 1);
    await p.logOut!();
    // The run ends while the device is gone: its answer could not go out…
    await waitFor("the answer's delivery to fail", () => stage.daemon.log().includes('"reply.undelivered"'));
    expect(fresh()).toEqual([]);
    await stage.daemon.stop();
    // …and waits: its message is still open for the next start.
    expect(inboxSettled(stage.home), "the message whose answer was not sent is closed").toBe(false);
    await stage.restart();
    await waitFor("the answer after the link", () => fresh().some((m) => m.text === answer));
    await settled(stage);
    expect(fresh().map((m) => m.text)).toEqual([answer]);
    expect(model.requests).toHaveLength(requests + 1);
  },
};

const crashBeforeTaken: Scenario = {
  name: "kill -9 the instant the platform has handed over a message, before the daemon has it on disk: it comes again and is answered once",
  skipReason: (t) => t.takenOnce,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = "Answered once, though the crash came before the message was on disk.";
    const fresh = freshIn(p, chat);
    model.setDefault(text(answer));
    try {
      await p.send(chat, p.person("owner"), "conformance: a message the crash overtakes");
      await stage.kill9();
      await stage.restart();
      await waitFor("the answer to the message the crash overtook", () => fresh().some((m) => m.text === answer));
      await settled(stage);
      expect(fresh().map((m) => m.text)).toEqual([answer]);
    } finally {
      model.setDefault(null);
    }
  },
};

/** In the order they run, after the other crash scenarios. */
export const onceScenarios: readonly Scenario[] = [crashBeforeTaken, crashBeforeTheAnswer, crashDuringTheParts, logoutWithAnswerPending];
