// Conformance scenarios about who is in a chat, for the platforms where a private chat can gain
// members (traits.privateChatsGrow): a Matrix room someone joins, a mail thread that gains a Cc.
// Written against the fake platform like scenarios.ts, each fake over its own wire protocol.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { inboxSettled, waitFor } from "../../support/daemon.ts";
import { lastUserContent, requestText, text, type RecordedRequest } from "../../support/fake-model.ts";
import { ownerDm, type BotMessage, type ChatRef, type FakePlatform } from "./platform.ts";
import type { Scenario, Stage } from "./scenarios.ts";

/** What appears in a chat from now on. */
function watch(p: FakePlatform, chat: ChatRef) {
  const seen = new Set(p.botMessages(chat).map((m) => m.id));
  const fresh = (): BotMessage[] => p.botMessages(chat).filter((m) => !seen.has(m.id));
  const shown = (answer: string): number => fresh().filter((m) => !m.interrupted && m.text === answer).length;
  return { fresh, shown, wait: (answer: string) => waitFor(`"${answer.slice(0, 50)}" in the ${chat.kind}`, () => shown(answer) >= 1) };
}

const settled = (stage: Stage) => waitFor("every accepted message's outcome to be recorded", () => inboxSettled(stage.home));
const userText = (req: RecordedRequest): string =>
  lastUserContent(req)
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");

/** The fact only the owner's own requests may carry: the locker code in the MEMORY.md the stage wrote. */
function ownerSecret(stage: Stage): string {
  const found = /locker code is (\S+)\./.exec(readFileSync(join(stage.home, "workspace", "MEMORY.md"), "utf8"));
  if (!found) throw new Error("the stage's MEMORY.md has no locker code");
  return found[1]!;
}

/** What the owner is told, once, in their private chat: the words of the README's privacy promise. */
const grownNotice = (who: string, platform: string) =>
  `🔓 ${who} can now read “Rooms” (${platform}), a chat you had with me alone. I answer there as in a group from now on, without your private memory or our conversation. Once only you and I are in it again, send /private there.`;

const privateChatGains: Scenario = {
  name: "a private chat that gains a member is a group from the next message; the owner is told once",
  skipReason: (t) => (t.privateChatsGrow === true ? undefined : t.privateChatsGrow),
  async run(stage) {
    const { platform: p, model } = stage;
    const secret = ownerSecret(stage);
    const owner = p.person("owner");
    const chat: ChatRef = { kind: "dm", with: owner, label: "rooms" };
    const inChat = watch(p, chat);
    const inOwner = watch(p, ownerDm(p));
    const answer = async (said: string, answered: string): Promise<RecordedRequest> => {
      const requests = model.requests.length;
      model.enqueue(text(answered));
      await p.send(chat, owner, said);
      await inChat.wait(answered);
      await settled(stage);
      expect(model.requests).toHaveLength(requests + 1);
      const req = model.requests.at(-1)!;
      expect(userText(req)).toContain(said);
      return req;
    };

    // The owner alone with Hearth: their private chat, answered with their memory.
    const alone = await answer("conformance: rooms: just between us", "Just the two of us here.");
    expect(alone.rawBody).toContain(secret);

    // Someone joins. The owner's next message is answered in the chat's shared scope: none of
    // the owner's memory, none of their conversation.
    const guest = p.person("stranger");
    await p.addMember!(chat, guest);
    const joined = await answer("conformance: rooms: our guest is here", "Hello to you both.");
    expect(joined.rawBody).not.toContain(secret);
    expect(requestText(joined)).not.toContain("conformance: rooms: just between us");
    const notice = grownNotice(guest.id, channelDescriptor(p.name)!.name);
    await inOwner.wait(notice);

    // Told once; still shared after the guest left, until the owner re-checks the chat.
    const again = await answer("conformance: rooms: still the three of us", "Still answering you both.");
    expect(again.rawBody).not.toContain(secret);
    await p.removeMember!(chat, guest);
    const left = await answer("conformance: rooms: the guest has gone", "Noted, though this chat stays shared.");
    expect(left.rawBody).not.toContain(secret);
    expect(inOwner.fresh().map((m) => m.text)).toEqual([notice]);
    expect(inChat.fresh().map((m) => m.text).some((t) => t.startsWith("🔓"))).toBe(false);

    // The owner's /private, with only the two of them in it, makes it private again.
    const requests = model.requests.length;
    await p.send(chat, owner, "/private");
    await inChat.wait("This chat is private again: only you and I are in it, and I answer here with your memory.");
    expect(model.requests).toHaveLength(requests);
    const reopened = await answer("conformance: rooms: alone again", "Just us again.");
    expect(reopened.rawBody).toContain(secret);
    expect(inOwner.fresh().map((m) => m.text)).toEqual([notice]);
  },
};

/** The scenarios of this file, in the order a channel runs them (scenarios.ts lists them among its own). */
export const roomScenarios: readonly Scenario[] = [privateChatGains];
