// Which question an answer answers, when two are open in the owner's chat: an approval the owner
// asked for, then a stranger's pairing request. On a platform whose questions are answered in
// words (WhatsApp, Signal, email) a bare "1" names neither, so it is asked back and settles
// nothing — on the code before, it settled the newest, and approved the stranger; an answer
// that names the older question (a quoted reply, a reaction, a reply to its mail, a button)
// settles that one and leaves the newer open.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { waitFor } from "../../support/daemon.ts";
import { ownerDm, type BotMessage, type ChatRef, type FakePlatform, type Person } from "./platform.ts";
import { askApproval, pairingCode, question, settled, watch, type Scenario, type Stage } from "./scenarios.ts";

/** What the owner is told for a bare number while more than one question is open in the chat. */
const WHICH_ONE = "Which one? Reply to the question you mean.";

/** A stranger writes; resolves once the owner's chat shows their pairing request. */
async function strangerAsks(stage: Stage): Promise<{ stranger: Person; chat: ChatRef; request: BotMessage }> {
  const p = stage.platform;
  const stranger = p.person("stranger");
  const chat: ChatRef = { kind: "dm", with: stranger };
  await p.send(chat, stranger, "conformance: may I talk to you too?");
  const code = await pairingCode(p, chat);
  return { stranger, chat, request: await question(p, "🤝", code) };
}

/** The bot's message `m` as the chat shows it now. */
const now = (p: FakePlatform, m: BotMessage): BotMessage | undefined => p.botMessages(ownerDm(p)).find((x) => x.id === m.id);

/**
 * A number written in the chat is answered there too ("Allowed."), beside the settled question;
 * waited for, so that it arrives within the scenario that caused it. `numbered`: whether the
 * answer was such a number (a button's answer and the owner's reaction are not said in the chat).
 */
const toldInChat = (inChat: ReturnType<typeof watch>, numbered: boolean, told: string) => (numbered ? inChat.wait(told) : Promise.resolve());

/**
 * The owner denies the still-open pairing request, which says so: it was open until now, and the
 * stranger was told nothing but their code.
 */
async function denyRequest(stage: Stage, request: BotMessage, strangerChat: ChatRef): Promise<void> {
  const p = stage.platform;
  const owner = p.person("owner");
  const inChat = watch(p, ownerDm(p));
  const denied = () => p.botMessages(ownerDm(p)).some((m) => m.text.startsWith(request.text.split("\n\n")[0]!) && m.text.endsWith(`\n\n❌ Denied by ${owner.name}.`));
  await p.choose(ownerDm(p), request, "Deny", owner);
  await waitFor("the pairing request to show it was denied", denied);
  await toldInChat(inChat, !p.capabilities.buttons, "Denied.");
  expect(p.botMessages(strangerChat)).toHaveLength(1);
}

const bareAnswerAskedBack: Scenario = {
  name: "two open questions and a bare answer: asked back, nothing settled",
  skipReason: ({ capabilities: c, answersInWords }) =>
    !answersInWords ? "its questions are answered by buttons, whose keys name their question" : !c.strangers ? "nobody but the owner can write to it: no pairing request comes as a second question" : undefined,
  async run(stage) {
    const { platform: p } = stage;
    const chat = ownerDm(p);
    const owner = p.person("owner");
    const file = join(stage.home, "workspace", "conformance-bare.txt");
    const inChat = watch(p, chat);
    const approval = await askApproval(stage, "conformance-bare.txt", "Done after the named answer.");
    const { chat: strangerChat, request } = await strangerAsks(stage);
    const afterBare = watch(p, chat);
    // The owner's "1", meant for the approval, written after the stranger's request arrived.
    await (p.writeBeside ? p.writeBeside(chat, request, "1", owner) : p.send(chat, owner, "1"));
    await afterBare.wait(WHICH_ONE);
    expect(afterBare.fresh().map((m) => m.text)).toEqual([WHICH_ONE]);
    expect(existsSync(file)).toBe(false);
    expect(now(p, approval)?.choices).toEqual(approval.choices);
    expect(now(p, request)?.choices).toEqual(["Approve", "Deny"]);
    expect(p.botMessages(strangerChat)).toHaveLength(1);

    // Named, each answer settles its own question.
    await p.choose(chat, approval, "Allow once", owner);
    await inChat.wait("Done after the named answer.");
    await toldInChat(inChat, !p.capabilities.buttons, "Allowed.");
    expect(readFileSync(file, "utf8")).toBe("ran\n");
    expect(now(p, request)?.choices).toEqual(["Approve", "Deny"]);
    await denyRequest(stage, request, strangerChat);
    await settled(stage);
    expect(inChat.shown("Done after the named answer.")).toBe(1);
  },
};

/** The ways a platform lets the owner name the older question, each given the question and the choice "Allow once". */
interface WayToName {
  how: string;
  /** Whether it is a number written in the chat, which is answered there (toldInChat). */
  numbered: boolean;
  answer(chat: ChatRef, q: BotMessage, owner: Person): Promise<unknown>;
}

function waysToName(p: FakePlatform): WayToName[] {
  const ways: WayToName[] = [];
  if (p.replyTo) ways.push({ how: "a quoted reply", numbered: true, answer: (chat, q, owner) => p.replyTo!(chat, q, String(q.choices.indexOf("Allow once") + 1), owner) });
  if (p.react) {
    ways.push({
      how: "a reaction",
      numbered: false,
      answer: (chat, q, owner) => {
        expect(q.text).toContain("✅ Allow once");
        return p.react!(chat, q, "✅", owner);
      },
    });
  }
  // A platform with buttons: the older question's button, whose key names it.
  if (ways.length === 0) ways.push({ how: "its button", numbered: false, answer: (chat, q, owner) => p.choose(chat, q, "Allow once", owner) });
  return ways;
}

const quotedAnswerToOlder: Scenario = {
  name: "a quoted answer to the older of two questions: the older settles, the newer stays open",
  skipReason: ({ capabilities: c }) => (!c.strangers ? "nobody but the owner can write to it: no pairing request comes as a second question" : undefined),
  async run(stage) {
    const { platform: p } = stage;
    const chat = ownerDm(p);
    const owner = p.person("owner");
    for (const [i, way] of waysToName(p).entries()) {
      const name = `conformance-older-${i + 1}.txt`;
      const answer = `Done: the older question was answered by ${way.how}.`;
      const inChat = watch(p, chat);
      const approval = await askApproval(stage, name, answer);
      const { chat: strangerChat, request } = await strangerAsks(stage);
      await way.answer(chat, approval, owner);
      await inChat.wait(answer);
      await toldInChat(inChat, way.numbered, "Allowed.");
      expect(readFileSync(join(stage.home, "workspace", name), "utf8"), way.how).toBe("ran\n");
      await waitFor(`the approval answered by ${way.how} to offer no choices`, () => now(p, approval)?.choices.length === 0);
      expect(now(p, request)?.choices, way.how).toEqual(["Approve", "Deny"]);
      expect(p.botMessages(strangerChat), way.how).toHaveLength(1);
      await denyRequest(stage, request, strangerChat);
      await settled(stage);
      expect(inChat.shown(answer), way.how).toBe(1);
    }
  },
};

/** The scenarios of this file, in the order a channel runs them. */
export const answerScenarios: readonly Scenario[] = [bareAnswerAskedBack, quotedAnswerToOlder];
