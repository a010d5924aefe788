// Matrix as a fake platform: the fake homeserver (test/support/fake-homeserver.ts), which the
// daemon's real matrix-js-sdk syncs with. People are users of the fake; a person's DM is a room
// they create and invite the bot to as a direct chat; the group is one room the owner made and
// allowlisted, where a message is addressed by a mention (`m.mentions` and the bot's name); a
// labelled private chat is another direct room of theirs, "Rooms", which others join and leave;
// the connection is the /sync long-poll, dropped and refused until restored.
import { channelDescriptor } from "../../../src/channels/registry.ts";
import type { Daemon } from "../../support/daemon.ts";
import { startFakeHomeserver, type FakeHomeserver, type FakeUser, type MatrixEvent } from "../../support/fake-homeserver.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";

export const MATRIX_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("matrix")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: true,
  privateChatsGrow: true,
};

export async function startMatrixPlatform(): Promise<FakePlatform> {
  return matrixPlatform(await startFakeHomeserver());
}

/** A question's choices as its text lists them ("✅ Allow once" lines above the hint), emoji and label. */
const choiceLines = (text: string) => {
  const blocks = text.split("\n\n");
  if (blocks.at(-1) !== "React with your choice." || blocks.length < 3) return [];
  return blocks.at(-2)!.split("\n").map((line) => ({ emoji: line.slice(0, line.indexOf(" ")), label: line.slice(line.indexOf(" ") + 1) }));
};
const choicesOf = (text: string) => choiceLines(text).map((c) => c.label);

export function matrixPlatform(hs: FakeHomeserver): FakePlatform {
  const bot = hs.addUser("hearth", "Hearth");
  const users = new Map<string, FakeUser>();
  const add = (role: Role, name: string): Person => {
    const u = hs.addUser(name.toLowerCase(), name);
    users.set(u.userId, u);
    return { role, id: u.userId, name };
  };
  const owner = add("owner", "Ann");
  const group = hs.createRoom(users.get(owner.id)!, { name: "Family", invite: [bot.userId] });
  const dms = new Map<string, string>();
  let people = 0;
  let syncs = 0;

  const roomOf = (chat: ChatRef): string => {
    if (chat.kind === "group") return group;
    const key = `${chat.with.id}\0${chat.label ?? ""}`;
    let room = dms.get(key);
    if (!room) {
      room = hs.createRoom(users.get(chat.with.id)!, { invite: [bot.userId], isDirect: true, ...(chat.label ? { name: "Rooms" } : {}) });
      dms.set(key, room);
    }
    return room;
  };
  const botEvents = (roomId: string) => hs.events(roomId).filter((e) => e.sender === bot.userId && e.type === "m.room.message");
  const isEdit = (e: MatrixEvent) => e.content["m.relates_to"]?.rel_type === "m.replace";
  const view = (roomId: string, e: MatrixEvent): BotMessage => {
    const edits = botEvents(roomId).filter((x) => isEdit(x) && x.content["m.relates_to"].event_id === e.event_id);
    const versions = [String(e.content.body ?? ""), ...edits.map((x) => String(x.content["m.new_content"]?.body ?? ""))];
    const text = versions.at(-1)!;
    return { id: e.event_id, text, versions, choices: choicesOf(text) };
  };
  const messages = (chat: ChatRef, redacted: boolean) => {
    const roomId = roomOf(chat);
    return botEvents(roomId)
      .filter((e) => !isEdit(e) && (e.redacted === true) === redacted && !e.content.url)
      .map((e) => view(roomId, e));
  };

  return {
    name: "matrix",
    capabilities: MATRIX_TRAITS.capabilities,
    daemonSetup: () => ({
      channels: { matrix: { homeserverUrl: hs.url, userId: bot.userId, encryption: false, ownerIds: [owner.id], dmPolicy: "pairing", rooms: { policy: "allowlist", allow: [group], requireMention: true } } },
      env: { MATRIX_ACCESS_TOKEN: bot.accessToken },
    }),
    async connected(_d: Daemon) {
      // A sync of this daemon's, after it started: the one before it may be the killed one's.
      const before = syncs;
      await hs.waitFor("the bot to sync", () => hs.syncCount(bot.userId) > before + 1 && hs.membership(group, bot.userId) === "join");
      syncs = hs.syncCount(bot.userId);
    },
    person(role) {
      if (role === "owner") return owner;
      people++;
      const p = add(role, `${role === "stranger" ? "Sam" : "Bob"}${people}`);
      if (role === "member") {
        hs.invite(users.get(owner.id)!, group, p.id);
        hs.join(users.get(p.id)!, group);
      }
      return p;
    },
    async send(chat, from, text, opts = {}) {
      const roomId = roomOf(chat);
      const u = users.get(from.id)!;
      const mention = chat.kind === "group" && opts.addressed ? { body: `Hearth: ${text}`, "m.mentions": { user_ids: [bot.userId] } } : { body: text, "m.mentions": {} };
      for (const f of opts.files ?? []) {
        const url = hs.addMedia(f.bytes, f.mime, f.name);
        hs.sendEvent(u, roomId, "m.room.message", { msgtype: f.kind === "photo" ? "m.image" : "m.file", filename: f.name, url, info: { mimetype: f.mime, size: f.bytes.byteLength }, ...mention });
      }
      if (!opts.files?.length) hs.sendEvent(u, roomId, "m.room.message", { msgtype: "m.text", ...mention });
    },
    botMessages: (chat) => messages(chat, false),
    deletedMessages: (chat) => messages(chat, true),
    async choose(chat, message, label, by) {
      const choice = choiceLines(message.text).find((c) => c.label === label);
      if (!choice) throw new Error(`no choice "${label}" under ${message.id}`);
      const roomId = roomOf(chat);
      const reaction = hs.sendEvent(users.get(by.id)!, roomId, "m.reaction", { "m.relates_to": { rel_type: "m.annotation", event_id: message.id, key: choice.emoji } });
      if (by.role === "owner") {
        // Acknowledged when the question is settled (it shows no choices any more).
        await hs.waitFor(`the bot to settle ${message.id}`, () => botEvents(roomId).some((e) => isEdit(e) && e.content["m.relates_to"].event_id === message.id && hs.events(roomId).indexOf(e) > hs.events(roomId).indexOf(reaction)));
        return "";
      }
      const told = await hs.waitFor(`the bot to answer ${by.name}'s reaction`, () => botEvents(roomId).find((e) => e.content.msgtype === "m.notice" && hs.events(roomId).indexOf(e) > hs.events(roomId).indexOf(reaction)));
      return String(told.content.body);
    },
    sentFiles: (chat) =>
      botEvents(roomOf(chat))
        .filter((e) => typeof e.content.url === "string")
        .map((e) => ({ name: String(e.content.filename ?? e.content.body), bytes: hs.media(e.content.url)!.bytes })),
    async holdDelivery(text) {
      let held = false;
      const final = (body: any) => body?.body === text || body?.["m.new_content"]?.body === text;
      const when = (body: any) => !held && final(body) && (held = true);
      hs.inject({ method: "PUT", path: /\/rooms\/[^/]+\/send\/m\.room\.message\//, when, reply: "hang" });
      await hs.waitFor(`the delivery of "${text}" to be held`, () => held);
    },
    async holdAnswer(text) {
      let held = false;
      hs.inject({ method: "PUT", path: /\/rooms\/[^/]+\/send\/m\.room\.message\//, when: (body: any) => !held && body?.body === text && (held = true), reply: "apply_then_hang" });
      await hs.waitFor(`the part "${text.slice(0, 40)}…" to be sent`, () => held);
    },
    async addMember(chat, person) {
      if (chat.kind !== "dm") throw new Error("members join a private chat here");
      const roomId = roomOf(chat);
      hs.invite(users.get(chat.with.id)!, roomId, person.id);
      hs.join(users.get(person.id)!, roomId);
    },
    async removeMember(chat, person) {
      hs.leave(users.get(person.id)!, roomOf(chat));
    },
    async loseConnection() {
      hs.loseConnection();
    },
    async restoreConnection() {
      hs.restore();
    },
    close: () => hs.close(),
  };
}
