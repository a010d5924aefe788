// WhatsApp as a fake platform: the fake WhatsApp (test/support/fake-whatsapp.ts) reached through
// the fake library at Hearth's socket interface (fake-whatsapp-socket.ts; WhatsApp itself cannot
// be faked at the network edge). Above that interface everything is the daemon's real code:
// normalising, choices as numbered replies quoting the question (a swipe on the phone), delivery, reconnecting, the credential store. The
// device is linked on the first start; people are numbers; the group is one allowed group JID,
// addressed by a mention; the connection is dropped and refused until restored.
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { waitFor, type Daemon } from "../../support/daemon.ts";
import { personJid, startFakeWhatsApp, WA_BOT, type FakeWhatsApp } from "../../support/fake-whatsapp.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";
import { numberedChoices } from "./signal.ts";

export const WHATSAPP_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("whatsapp")!.capabilities,
  holdsDeliveries: true,
  privateChatsGrow: "a WhatsApp chat with a person is the account and that person for good; a group is a group whatever its size",
  oneConnection: true,
  sameAfterCrash: true,
  logsOut: true,
  answersInWords: true,
  takenOnce: "Baileys sends WhatsApp the delivery receipt before it hands the message to Hearth: WhatsApp never sends it again",
};

export const WA_OWNER: Person = { role: "owner", id: "4915111111111", name: "Ann" };
export const WA_GROUP = "120363000000000001@g.us";

export async function startWhatsAppPlatform(): Promise<FakePlatform> {
  return whatsappPlatform(await startFakeWhatsApp());
}

/** Links the device when it waits for the phone, then waits for the connection to open. */
export async function linkedAndConnected(wa: FakeWhatsApp, after: number): Promise<void> {
  await waitFor("the WhatsApp device to connect or ask to be linked", () => (wa.connectsOpened > after && wa.connected()) || wa.waitingForLink());
  if (wa.waitingForLink()) wa.link();
  await waitFor("the WhatsApp connection to be open", () => wa.connected());
}

export function whatsappPlatform(wa: FakeWhatsApp): FakePlatform {
  let people = 0;
  let connects = 0;
  const jidOf = (chat: ChatRef) => (chat.kind === "group" ? WA_GROUP : personJid(chat.with.id));
  const view = (chat: ChatRef): BotMessage[] => {
    const messages = wa.messages(jidOf(chat));
    return messages.map((m, i) => {
      const asked = numberedChoices(m.text);
      const settled = asked !== null && messages.slice(i + 1).some((later) => later.text.startsWith(`${asked.question}\n\n`) && numberedChoices(later.text) === null);
      return { id: m.id, text: m.text, versions: [m.text], choices: asked && !settled ? asked.choices : [] };
    });
  };
  /** A reply quoting `message` (a swipe on it, on the phone). */
  const replyTo = (chat: ChatRef, message: BotMessage, text: string, by: Person) =>
    void wa.receive({ from: { number: by.id, name: by.name }, ...(chat.kind === "group" ? { group: WA_GROUP } : {}), text, quote: { id: message.id, sender: WA_BOT, text: message.text } });

  return {
    name: "whatsapp",
    capabilities: WHATSAPP_TRAITS.capabilities,
    daemonSetup: () => ({
      channels: { whatsapp: { ownerIds: [`+${WA_OWNER.id}`], dmPolicy: "pairing", groups: { policy: "allowlist", allow: [WA_GROUP], requireMention: true } } },
      env: wa.env(),
    }),
    async connected(_d: Daemon) {
      await linkedAndConnected(wa, connects);
      connects = wa.connectsOpened;
    },
    person(role: Role): Person {
      if (role === "owner") return WA_OWNER;
      people++;
      return { role, id: `49${role === "stranger" ? 153 : 152}${String(people).padStart(8, "0")}`, name: `${role === "stranger" ? "Sam" : "Bob"}${people}` };
    },
    async send(chat, from, text, opts = {}) {
      const files = opts.files ?? [];
      if (files.length > 1) throw new Error("a WhatsApp message carries one file; send them one by one");
      const file = files[0];
      wa.receive({
        from: { number: from.id, name: from.name },
        ...(chat.kind === "group" ? { group: WA_GROUP, mentionsBot: opts.addressed === true } : {}),
        text,
        ...(file ? { media: { kind: file.kind === "photo" ? "image" : "document", mime: file.mime, fileName: file.name, bytes: file.bytes } } : {}),
      });
    },
    botMessages: view,
    deletedMessages: () => [],
    async choose(chat, message, label, by) {
      const number = message.choices.indexOf(label) + 1;
      if (number === 0) throw new Error(`no choice "${label}" in ${JSON.stringify(message.choices)}`);
      replyTo(chat, message, String(number), by);
      return "";
    },
    replyTo: async (chat, message, text, by) => replyTo(chat, message, text, by),
    sentFiles: (chat) => wa.messages(jidOf(chat)).flatMap((m) => (m.file ? [{ name: m.file.name, bytes: m.file.bytes }] : [])),
    async holdDelivery(text) {
      let held = false;
      await wa.holdSend((b) => !held && b.what.kind === "text" && b.what.text === text && (held = true));
    },
    async holdAnswer(text) {
      let held = false;
      await wa.holdAnswer((b) => !held && b.what.kind === "text" && b.what.text === text && (held = true));
    },
    async logOut() {
      wa.logout();
    },
    async loseConnection() {
      wa.drop();
    },
    async restoreConnection() {
      wa.restore();
    },
    close: () => wa.close(),
  };
}
