// The channel conformance scenarios, written once against the fake platform (platform.ts) and
// run by every channel against the real daemon (`hearth start`) with the fake model. A scenario
// states what it needs of the platform; a channel that lacks it reports the scenario skipped
// with the reason. Scenarios share one daemon and run in order, so each one counts only what
// changed while it ran (the bot's new messages, the model's new requests) and ends when the
// daemon has recorded an outcome for every message it accepted: nothing more can then arrive.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { acceptedIds, inboxSettled, waitFor, type Daemon } from "../../support/daemon.ts";
import { lastUserContent, requestText, text, toolCall, type FakeModel, type RecordedRequest } from "../../support/fake-model.ts";
import { pdf, picture } from "../../support/media-files.ts";
import { answerScenarios } from "./scenarios-answers.ts";
import { onceScenarios } from "./scenarios-once.ts";
import { roomScenarios } from "./scenarios-rooms.ts";
import { ownerDm, type BotMessage, type ChatRef, type FakePlatform, type Person, type PlatformTraits } from "./platform.ts";

/** The daemon a channel's scenarios run against, with what they need to crash and restart it. */
export interface Stage {
  readonly platform: FakePlatform;
  readonly model: FakeModel;
  readonly home: string;
  /** The daemon running now (a new one after `restart`). */
  readonly daemon: Daemon;
  /** kill -9, and waits until the process is gone. */
  kill9(): Promise<void>;
  /** Starts the daemon again on the same home and waits until the platform is connected. */
  restart(): Promise<void>;
}

export interface Scenario {
  name: string;
  /** Why a channel with these capabilities cannot run it; undefined when it can. */
  skipReason(traits: PlatformTraits): string | undefined;
  run(stage: Stage): Promise<void>;
}

/** A fact in the owner's MEMORY.md (prepareHome) that only the owner's own requests may carry. */
const OWNER_SECRET = "LOCKER-CODE-4711-zebra";

/**
 * What the scenarios need in the home before the daemon first starts: the owner's private
 * memory (a session's prompt is fixed when it starts, so it is there from the beginning).
 */
export function prepareHome(home: string): void {
  mkdirSync(join(home, "workspace"), { recursive: true });
  writeFileSync(join(home, "workspace", "MEMORY.md"), `# Memory\n\n- 2026-11-01: the owner's locker code is ${OWNER_SECRET}.\n`);
}

// ── what a person sees ─────────────────────────────────────────────────────────────────────

/** What appears in a chat from now on: the messages that were not there when it was called. */
export function watch(p: FakePlatform, chat: ChatRef) {
  const seen = new Set(p.botMessages(chat).map((m) => m.id));
  const fresh = (): BotMessage[] => p.botMessages(chat).filter((m) => !seen.has(m.id));
  /** How many new complete messages show exactly `answer`. */
  const shown = (answer: string): number => fresh().filter((m) => !m.interrupted && m.text === answer).length;
  return {
    fresh,
    shown,
    wait: (answer: string) => waitFor(`"${answer.slice(0, 50)}" in the ${chat.kind}`, () => shown(answer) >= 1),
  };
}

/** Every message the daemon accepted has its outcome recorded: nothing more is sent for them. */
export const settled = (stage: Stage) => waitFor("every accepted message's outcome to be recorded", () => inboxSettled(stage.home));

const userText = (req: RecordedRequest): string =>
  lastUserContent(req)
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const PAIRING_CODE = /\b([A-HJ-KM-NP-Z2-9]{8})\b/;

/** Waits for a pairing code in `stranger`'s DM and returns it. */
export async function pairingCode(p: FakePlatform, chat: ChatRef): Promise<string> {
  await waitFor("the pairing code", () => p.botMessages(chat).some((m) => PAIRING_CODE.test(m.text)));
  return PAIRING_CODE.exec(p.botMessages(chat).find((m) => PAIRING_CODE.test(m.text))!.text)![1]!;
}

/** The owner's question (an approval, a pairing request) whose text starts with `start` and names `needle`. */
export async function question(p: FakePlatform, start: string, needle: string): Promise<BotMessage> {
  const find = () => p.botMessages(ownerDm(p)).find((m) => m.text.startsWith(start) && m.text.includes(needle) && m.choices.length > 0);
  await waitFor(`the owner's question about ${needle}`, () => find() !== undefined);
  return find()!;
}

/** Paragraphs of plain words (no markup, so every platform shows them as written), about `length` characters. */
function longAnswer(length: number): string {
  const paragraphs: string[] = [];
  let total = 0;
  for (let i = 1; total < length; i++) {
    const p = `Paragraph ${i} of the long answer: ${"the quick brown fox jumps over the lazy dog ".repeat(6).trim()}.`;
    paragraphs.push(p);
    total += p.length + 2;
  }
  return paragraphs.join("\n\n");
}

// ── the scenarios ──────────────────────────────────────────────────────────────────────────

const ownerAnsweredOnce: Scenario = {
  name: "the owner's DM is answered once",
  skipReason: () => undefined,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const inChat = watch(p, chat);
    const deleted = p.deletedMessages(chat).length;
    const requests = model.requests.length;
    model.enqueue(text("Hello Ann, here is your answer."));
    await p.send(chat, p.person("owner"), "conformance: hello there");
    await inChat.wait("Hello Ann, here is your answer.");
    await settled(stage);
    expect(inChat.fresh().map((m) => m.text)).toEqual(["Hello Ann, here is your answer."]);
    expect(p.deletedMessages(chat)).toHaveLength(deleted);
    expect(model.requests).toHaveLength(requests + 1);
    expect(userText(model.requests.at(-1)!)).toContain("conformance: hello there");
  },
};

const groupOnlyWhenAddressed: Scenario = {
  name: "a group is answered only when the bot is addressed",
  skipReason: ({ capabilities: c }) => (c.groups ? undefined : "no group chats"),
  async run(stage) {
    const { platform: p, model } = stage;
    const group: ChatRef = { kind: "group" };
    const member = p.person("member");
    const inGroup = watch(p, group);
    const requests = model.requests.length;
    await p.send(group, member, "conformance: we should get pizza tonight", { addressed: false });
    model.enqueue(text("Pizza sounds good to me."));
    await p.send(group, member, "conformance: do you agree?", { addressed: true });
    await inGroup.wait("Pizza sounds good to me.");
    await settled(stage);
    expect(inGroup.fresh().map((m) => m.text)).toEqual(["Pizza sounds good to me."]);
    // One model call, for the addressed message; the other came along only as its context.
    expect(model.requests).toHaveLength(requests + 1);
    expect(userText(model.requests.at(-1)!)).toContain("conformance: do you agree?");
    expect(requestText(model.requests.at(-1)!)).toContain("conformance: we should get pizza tonight");
  },
};

const strangerGetsOneCode: Scenario = {
  name: "a stranger gets one pairing code and nothing else, without a model call",
  skipReason: ({ capabilities: c }) => (c.strangers ? undefined : "nobody but the owner can write to it"),
  async run(stage) {
    const { platform: p, model } = stage;
    const stranger = p.person("stranger");
    const chat: ChatRef = { kind: "dm", with: stranger };
    const requests = model.requests.length;
    const silent = () => stage.daemon.log().split('"pairing.silent"').length;
    const silentBefore = silent();
    await p.send(chat, stranger, "conformance: hi, who are you?");
    const code = await pairingCode(p, chat);
    await p.send(chat, stranger, "conformance: hello? are you there?");
    await p.send(chat, stranger, "conformance: please answer");
    await waitFor("the stranger's later messages to be handled", () => silent() - silentBefore >= 2);
    await settled(stage);
    expect(p.botMessages(chat)).toHaveLength(1);
    expect(p.botMessages(chat)[0]!.text).toContain(code);
    expect(model.requests).toHaveLength(requests);
  },
};

/** The stranger writes, the owner approves them with `approve`, and then they are answered. */
async function approveStranger(stage: Stage, approve: (code: string, stranger: Person) => Promise<void>): Promise<void> {
  const { platform: p, model } = stage;
  const stranger = p.person("stranger");
  const chat: ChatRef = { kind: "dm", with: stranger };
  await p.send(chat, stranger, "conformance: may I talk to you?");
  const code = await pairingCode(p, chat);
  await approve(code, stranger);
  await waitFor("the stranger told they were approved", () => p.botMessages(chat).length === 2);
  const answer = `Nice to meet you, ${stranger.name}.`;
  const requests = model.requests.length;
  const inChat = watch(p, chat);
  model.enqueue(text(answer));
  await p.send(chat, stranger, "conformance: hello again");
  await inChat.wait(answer);
  await settled(stage);
  expect(p.botMessages(chat).map((m) => m.text).slice(2)).toEqual([answer]);
  expect(model.requests).toHaveLength(requests + 1);
  expect(userText(model.requests.at(-1)!)).toContain("conformance: hello again");
  // Their own conversation: nothing of the owner's is in it.
  expect(requestText(model.requests.at(-1)!)).not.toContain("conformance: hello there");
}

const ownerApprovesStranger: Scenario = {
  name: "the owner approves a stranger (hearth pairing approve, and the button), who is then answered",
  skipReason: ({ capabilities: c }) => (c.strangers ? undefined : "nobody but the owner can write to it"),
  async run(stage) {
    await approveStranger(stage, async (code) => {
      const r = await stage.daemon.hearth(["pairing", "approve", code]);
      expect(r.code, r.stderr).toBe(0);
    });
    if (!stage.platform.capabilities.buttons) return;
    await approveStranger(stage, async (code) => {
      const p = stage.platform;
      const q = await question(p, "🤝", code);
      expect(q.choices).toEqual(["Approve", "Deny"]);
      await p.choose(ownerDm(p), q, "Approve", p.person("owner"));
    });
  },
};

/** The owner asks for a command that needs approval; returns the question once it is shown. */
export async function askApproval(stage: Stage, file: string, answer: string): Promise<BotMessage> {
  const { platform: p, model } = stage;
  model.enqueue(toolCall("exec", { command: `echo ran >> ${file}` }), text(answer));
  await p.send(ownerDm(p), p.person("owner"), `conformance: please write ${file}`);
  return question(p, "🔐", file);
}

const ownerApproves: Scenario = {
  name: "an approval answered by the owner (button or numbered reply) runs the command once",
  skipReason: () => undefined,
  async run(stage) {
    const { platform: p } = stage;
    const chat = ownerDm(p);
    const file = join(stage.home, "workspace", "conformance-approved.txt");
    const inChat = watch(p, chat);
    const q = await askApproval(stage, "conformance-approved.txt", "Done: it ran once.");
    expect(q.choices).toEqual(["Allow once", "Allow for 30 min", "Always", "Deny"]);
    await p.choose(chat, q, "Allow once", p.person("owner"));
    await inChat.wait("Done: it ran once.");
    await settled(stage);
    expect(readFileSync(file, "utf8")).toBe("ran\n");
    expect(inChat.shown("Done: it ran once.")).toBe(1);
    // The question no longer offers its choices.
    expect(p.botMessages(chat).find((m) => m.id === q.id)?.choices ?? []).toEqual([]);
  },
};

const onlyOwnerAnswerCounts: Scenario = {
  name: "an approval pressed by someone else changes nothing; only the owner's answer counts",
  skipReason: ({ capabilities: c }) => (!c.buttons ? "no buttons: a numbered reply comes only from the owner's own chat" : !c.strangers && !c.groups ? "nobody but the owner can reach it" : undefined),
  async run(stage) {
    const { platform: p } = stage;
    const chat = ownerDm(p);
    const file = join(stage.home, "workspace", "conformance-others.txt");
    const inChat = watch(p, chat);
    const q = await askApproval(stage, "conformance-others.txt", "Done after the owner's press.");
    const other = p.person(p.capabilities.groups ? "member" : "stranger");
    const told = await p.choose(chat, q, "Allow once", other);
    expect(told).toBe("Only the owner can approve.");
    expect(() => readFileSync(file)).toThrow();
    expect(p.botMessages(chat).find((m) => m.id === q.id)!.choices).toEqual(q.choices);
    expect(inChat.shown("Done after the owner's press.")).toBe(0);

    await p.choose(chat, q, "Allow once", p.person("owner"));
    await inChat.wait("Done after the owner's press.");
    await settled(stage);
    expect(readFileSync(file, "utf8")).toBe("ran\n");
    expect(inChat.shown("Done after the owner's press.")).toBe(1);
  },
};

const longAnswerSplit: Scenario = {
  name: "a long answer is split at the platform's limit and rejoins exactly",
  skipReason: () => undefined,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const limit = p.capabilities.maxMessageLength;
    const answer = longAnswer(Number.isFinite(limit) ? Math.round(limit * 2.3) : 6_000);
    const inChat = watch(p, chat);
    model.enqueue(text(answer, { chunkSize: 700, chunkDelayMs: 20 }));
    await p.send(chat, p.person("owner"), "conformance: write me something long");
    const squash = (s: string) => s.replace(/\s+/g, " ").trim();
    const rejoined = () => squash(inChat.fresh().map((m) => m.text).join("\n\n"));
    await waitFor("the whole long answer", () => rejoined() === squash(answer));
    await settled(stage);
    const parts = inChat.fresh();
    if (Number.isFinite(limit)) expect(parts.length).toBeGreaterThanOrEqual(Math.ceil(answer.length / limit));
    else expect(parts).toHaveLength(1);
    for (const m of parts) for (const v of m.versions) expect(v.length).toBeLessThanOrEqual(limit);
    expect(rejoined()).toBe(squash(answer));
    // Cut between paragraphs only, each part whole: joined back with the paragraph break, exact.
    expect(parts.map((m) => m.text.trim()).join("\n\n")).toBe(answer);
  },
};

const streaming: Scenario = {
  name: "an answer streams by edits, or arrives as one final message",
  skipReason: () => undefined,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = "Streaming answer: one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen.";
    const inChat = watch(p, chat);
    model.enqueue(text(answer, { chunkSize: 12, chunkDelayMs: 120 }));
    await p.send(chat, p.person("owner"), "conformance: count slowly");
    await inChat.wait(answer);
    await settled(stage);
    const [message, ...rest] = inChat.fresh();
    expect(rest).toEqual([]);
    expect(message!.text).toBe(answer);
    if (p.capabilities.edits) {
      // At least one preview with part of the answer before the final text.
      const partOfAnswer = (v: string) => {
        const shownPart = v.replace(/\s*…$/, "").trimEnd(); // a preview may end with a "still writing" mark
        return shownPart.length > 0 && shownPart !== answer && answer.startsWith(shownPart);
      };
      const previews = message!.versions.slice(0, -1).filter(partOfAnswer);
      expect(previews.length, JSON.stringify(message!.versions)).toBeGreaterThanOrEqual(1);
    } else {
      expect(message!.versions).toEqual([answer]);
    }
  },
};

const filesIn: Scenario = {
  name: "a photo and a document sent in reach the model's request",
  skipReason: ({ capabilities: c }) => (c.filesIn ? undefined : "no files in"),
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const owner = p.person("owner");
    const photo = await picture("jpeg");
    const doc = pdf(1);
    const requests = model.requests.length;
    const inChat = watch(p, chat);
    model.enqueue(text("A red square."), text("A one-page report."));
    await p.send(chat, owner, "conformance: what is this picture?", { files: [{ kind: "photo", name: "square.jpg", mime: "image/jpeg", bytes: photo }] });
    await inChat.wait("A red square.");
    await p.send(chat, owner, "conformance: and this report?", { files: [{ kind: "document", name: "report.pdf", mime: "application/pdf", bytes: doc }] });
    await inChat.wait("A one-page report.");
    await settled(stage);
    expect(model.requests).toHaveLength(requests + 2);
    const first = lastUserContent(model.requests[requests]!);
    expect(first.filter((b) => b.type === "image").map((b) => b.source)).toEqual([{ type: "base64", media_type: "image/jpeg", data: b64(photo) }]);
    expect(userText(model.requests[requests]!)).toContain("conformance: what is this picture?");
    const second = lastUserContent(model.requests[requests + 1]!);
    expect(second.filter((b) => b.type === "document").map((b) => b.source)).toEqual([{ type: "base64", media_type: "application/pdf", data: b64(doc) }]);
  },
};

const fileOut: Scenario = {
  name: "a file goes out (send_file), once, with its bytes",
  skipReason: ({ capabilities: c }) => (c.filesOut ? undefined : "no files out"),
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const png = await picture("png");
    writeFileSync(join(stage.home, "workspace", "conformance-out.png"), png);
    const files = p.sentFiles(chat).length;
    const inChat = watch(p, chat);
    model.enqueue(toolCall("send_file", { path: "conformance-out.png" }), text("I sent you the picture."));
    await p.send(chat, p.person("owner"), "conformance: send me the picture");
    await inChat.wait("I sent you the picture.");
    await settled(stage);
    const sent = p.sentFiles(chat).slice(files);
    expect(sent).toHaveLength(1);
    expect(Buffer.from(sent[0]!.bytes).equals(Buffer.from(png))).toBe(true);
    expect(inChat.shown("I sent you the picture.")).toBe(1);
  },
};

/** Crashes so far: each one's texts are its own, so a scenario can run twice on one daemon. */
let crashes = 0;

const crashBeforeDelivery: Scenario = {
  name: "kill -9 between the model's answer and its delivery: delivered once after the restart, no second model call",
  skipReason: (t) => (t.holdsDeliveries ? undefined : "the fake platform cannot hold a delivery on its way"),
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = `Delivered exactly once after the crash (${++crashes}).`;
    const inChat = watch(p, chat);
    const requests = model.requests.length;
    model.enqueue(text(answer));
    const held = p.holdDelivery!(answer);
    await p.send(chat, p.person("owner"), `conformance: answer across crash ${crashes}`);
    await held;
    await stage.kill9();
    // Nothing carried the answer past the held delivery before the daemon died.
    expect(inChat.shown(answer), "the answer was shown before the crash").toBe(0);
    await stage.restart();
    await inChat.wait(answer);
    await settled(stage);
    const after = inChat.fresh().filter((m) => !m.interrupted);
    expect(after.map((m) => m.text)).toEqual([answer]);
    expect(model.requests).toHaveLength(requests + 1);
  },
};

const crashAtRandom: Scenario = {
  name: "kill -9 at a random moment of an answer: it is delivered exactly once after the restart",
  skipReason: () => undefined,
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const answer = "Answered once, whatever the moment of the crash.";
    const inChat = watch(p, chat);
    // Every run of the message (the first, and one after the restart) gets the same answer.
    model.setDefault(text(answer, { chunkSize: 8, chunkDelayMs: 60 }));
    try {
      const before = acceptedIds(stage.home);
      await p.send(chat, p.person("owner"), "conformance: answer across a random crash");
      // Chosen, not waited for: from the message on disk to after the answer (the instant before: scenarios-once.ts).
      await waitFor("the daemon to have the message on disk", () => [...acceptedIds(stage.home)].some((id) => !before.has(id)));
      const moment = Math.floor(Math.random() * 1_500);
      await sleep(moment);
      await stage.kill9();
      await stage.restart();
      await inChat.wait(answer).catch((err: unknown) => {
        throw new Error(`killed ${moment} ms after the message was on disk: ${String(err)}`);
      });
      await settled(stage);
      const after = inChat.fresh().filter((m) => !m.interrupted);
      expect(after.map((m) => m.text), `killed ${moment} ms after the message was on disk`).toEqual([answer]);
    } finally {
      model.setDefault(null);
    }
  },
};

const lostConnection: Scenario = {
  name: "a lost connection resumes without losing or repeating a message",
  skipReason: (t) => (t.oneConnection ? "one connection for receiving and sending: nothing can be sent while it is lost (its own e2e covers the outage)" : undefined),
  async run(stage) {
    const { platform: p, model } = stage;
    const chat = ownerDm(p);
    const owner = p.person("owner");
    const inChat = watch(p, chat);
    const requests = model.requests.length;
    model.enqueue(text("First, before the outage."));
    await p.send(chat, owner, "conformance: first");
    await inChat.wait("First, before the outage.");

    // The connection breaks while the second message is being answered…
    model.enqueue(text("Second, answered during the outage.", { headDelayMs: 800 }));
    await p.send(chat, owner, "conformance: second");
    await model.waitForRequests(requests + 2);
    await p.loseConnection();
    await inChat.wait("Second, answered during the outage.");
    // …and the third is written while it is down.
    model.enqueue(text("Third, after the outage."));
    await p.send(chat, owner, "conformance: third");
    await p.restoreConnection();
    await inChat.wait("Third, after the outage.");
    await settled(stage);
    expect(inChat.fresh().filter((m) => !m.interrupted).map((m) => m.text)).toEqual(["First, before the outage.", "Second, answered during the outage.", "Third, after the outage."]);
    expect(model.requests).toHaveLength(requests + 3);
    expect(model.requests.slice(requests).map((r) => userText(r).split("\n").at(-1))).toEqual(["conformance: first", "conformance: second", "conformance: third"]);
  },
};

const memoryStaysPrivate: Scenario = {
  name: "the owner's private memory never appears in a group's model request",
  skipReason: ({ capabilities: c }) => (c.groups ? undefined : "no group chats"),
  async run(stage) {
    const { platform: p, model } = stage;
    const secret = OWNER_SECRET;
    const group: ChatRef = { kind: "group" };
    const requests = model.requests.length;
    const inGroup = watch(p, group);
    const inOwner = watch(p, ownerDm(p));
    model.enqueue(text("I can't share that."));
    await p.send(group, p.person("member"), "conformance: what is the owner's locker code?", { addressed: true });
    await inGroup.wait("I can't share that.");
    await settled(stage);
    const groupRequest = model.requests[requests]!;
    expect(requestText(groupRequest)).toContain("conformance: what is the owner's locker code?");
    expect(groupRequest.rawBody).not.toContain(secret);

    // The owner's own request has it: its absence above means something.
    model.enqueue(text("It is in your memory."));
    await p.send(ownerDm(p), p.person("owner"), "conformance: what is my locker code?");
    await inOwner.wait("It is in your memory.");
    await settled(stage);
    expect(model.requests.at(-1)!.rawBody).toContain(secret);
  },
};

/** Every scenario, in the order a channel runs them (the crashes and the outage last). */
export const scenarios: readonly Scenario[] = [
  ownerAnsweredOnce,
  groupOnlyWhenAddressed,
  strangerGetsOneCode,
  ownerApprovesStranger,
  ownerApproves,
  onlyOwnerAnswerCounts,
  ...answerScenarios,
  longAnswerSplit,
  streaming,
  filesIn,
  fileOut,
  memoryStaysPrivate,
  ...roomScenarios,
  lostConnection,
  crashBeforeDelivery,
  crashAtRandom,
  ...onceScenarios,
];

export const scenario = { ownerAnsweredOnce, crashBeforeDelivery, crashAtRandom } as const;
