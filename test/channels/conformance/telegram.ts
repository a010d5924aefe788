// Telegram as a fake platform: the Bot API emulator (test/support/telegram-emulator.ts), which the
// daemon's real grammY polls. People are emulated users; the group is one allowed supergroup,
// where a message is addressed by an @mention; the connection is getUpdates, which the proxy
// can reset.
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { waitFor, type Daemon } from "../../support/daemon.ts";
import { EMULATED_BOT, startTelegramEmulator, type BotMessage as EmulatedMessage, type TelegramEmulator } from "../../support/telegram-emulator.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";

export const TELEGRAM_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("telegram")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: "the Bot API has no idempotent send and cannot list a chat's messages: a part Telegram created in the instant before its id was recorded is sent again (docs/architecture.md §5, known window)",
  privateChatsGrow: "a Telegram private chat is the bot and one person for good",
};

const OWNER: Person = { role: "owner", id: "100", name: "Ann" };
const GROUP = { id: -1001, type: "supergroup" as const, title: "Family" };

export async function startTelegramPlatform(): Promise<FakePlatform> {
  return telegramPlatform(await startTelegramEmulator());
}

/** The fake platform over a running emulator (the caller's to stop through `close`). */
export function telegramPlatform(emu: TelegramEmulator): FakePlatform {
  let people = 0;
  let lost = false;
  let outage = false;
  const chatId = (chat: ChatRef) => (chat.kind === "group" ? GROUP.id : Number(chat.with.id));
  const user = (who: Person, chat: ChatRef) => emu.user({ userId: Number(who.id), firstName: who.name, ...(chat.kind === "group" ? { chat: GROUP } : {}) });
  const view = (m: EmulatedMessage): BotMessage => ({ id: String(m.messageId), text: m.text, versions: [...m.history], choices: (m.keyboard ?? []).flat().map((b) => b.text) });

  return {
    name: "telegram",
    capabilities: TELEGRAM_TRAITS.capabilities,
    daemonSetup: () => ({
      channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [OWNER.id], dmPolicy: "pairing", groups: { policy: "allowlist", allow: [String(GROUP.id)] } } },
      env: { TELEGRAM_BOT_TOKEN: emu.token },
    }),
    connected: (d: Daemon) => waitFor("telegram polling", () => d.log().includes("telegram.polling")),
    person(role: Role): Person {
      if (role === "owner") return OWNER;
      people++;
      return { role, id: String((role === "stranger" ? 5000 : 2000) + people), name: `${role === "stranger" ? "Sam" : "Bob"}${people}` };
    },
    async send(chat, from, text, opts = {}) {
      const words = chat.kind === "group" && opts.addressed ? `@${EMULATED_BOT.username} ${text}` : text;
      const files = opts.files ?? [];
      if (files.length > 1) throw new Error("a Telegram message carries one file; send them one by one");
      const file = files[0];
      if (!file) return void (await user(from, chat).send(words));
      const stored = emu.addFile(file.bytes);
      const media = file.kind === "photo" ? { photo: [{ ...stored, width: 64, height: 48 }] } : { document: { ...stored, file_name: file.name, mime_type: file.mime } };
      await user(from, chat).sendMedia({ ...media, caption: words });
    },
    botMessages: (chat) => emu.botMessages(chatId(chat)).map(view),
    deletedMessages: (chat) => emu.deletedBotMessages().filter((m) => m.chatId === String(chatId(chat))).map(view),
    async choose(chat, message, label, by) {
      const answered = emu.callsTo("answerCallbackQuery").length;
      await emu.user({ userId: Number(by.id), firstName: by.name }).press(Number(message.id), label);
      await waitFor(`the bot to answer ${by.name}'s press`, () => emu.callsTo("answerCallbackQuery").length > answered);
      return String(emu.callsTo("answerCallbackQuery")[answered]!.body.text ?? "");
    },
    sentFiles: (chat) => emu.sentFiles.filter((f) => f.chatId === String(chatId(chat))).map((f) => ({ name: f.name, bytes: f.bytes })),
    async holdDelivery(text) {
      // The final text goes out (in HTML) as a send or as an edit of the preview: whichever comes
      // first is held. A preview may show the same words before it (plain, not the delivery).
      let held = false;
      const when = (body: Record<string, unknown>) => !held && body.parse_mode === "HTML" && String(body.text ?? "") === text && (held = true);
      emu.inject({ method: "sendMessage", when, reply: "hang" });
      emu.inject({ method: "editMessageText", when, reply: "hang" });
      await waitFor(`the delivery of "${text}" to be held`, () => held);
    },
    async loseConnection() {
      lost = true;
      const since = Date.now();
      // One fault for every outage: it resets each getUpdates while `lost` holds.
      if (!outage) emu.inject({ method: "getUpdates", when: () => lost, times: Number.MAX_SAFE_INTEGER, reply: "reset" });
      outage = true;
      await waitFor("a getUpdates to fail", () => emu.calls.some((c) => c.method === "getUpdates" && c.injected && c.at >= since));
    },
    async restoreConnection() {
      lost = false;
    },
    close: () => emu.stop(),
  };
}
