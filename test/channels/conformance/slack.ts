// Slack as a fake platform: the fake Slack (test/support/fake-slack.ts, the Web API and the
// Socket Mode WebSocket), which the daemon's real @slack/bolt talks to. People are users of the
// fake; the group is one allowed channel, where a message is addressed by a mention of the bot;
// the connection is the Socket Mode WebSocket, dropped without a close frame and refused until
// restored.
import { channelDescriptor } from "../../../src/channels/registry.ts";
import type { Daemon } from "../../support/daemon.ts";
import { startFakeSlack, type FakeSlack, type FakeSlackMessage, type FakeSlackUser } from "../../support/fake-slack.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";

export const SLACK_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("slack")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: true,
  privateChatsGrow: "a Slack DM is the bot and one person for good: people added to it make a new group DM, a group",
};

export async function startSlackPlatform(): Promise<FakePlatform> {
  return slackPlatform(await startFakeSlack());
}

/** The fake platform over a running fake Slack (the caller's to close through `close`). */
export function slackPlatform(slack: FakeSlack): FakePlatform {
  const users = new Map<string, FakeSlackUser>();
  const add = (role: Role, name: string): Person => {
    const u = slack.addUser(name);
    users.set(u.id, u);
    return { role, id: u.id, name };
  };
  const owner = add("owner", "owner");
  const general = slack.addChannel("general");
  let people = 0;
  let sessions = 0;
  const channelOf = (chat: ChatRef) => (chat.kind === "group" ? general : slack.dmChannel(users.get(chat.with.id)!));
  const view = (m: FakeSlackMessage): BotMessage => ({ id: m.ts, text: m.text, versions: [...m.history], choices: m.buttons.map((b) => b.label) });

  return {
    name: "slack",
    capabilities: SLACK_TRAITS.capabilities,
    daemonSetup: () => ({
      channels: { slack: { apiUrl: slack.apiUrl, ownerIds: [owner.id], channels: { policy: "allowlist", allow: [general], requireMention: true } } },
      env: { SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken },
    }),
    async connected(_d: Daemon) {
      // A new connection of this daemon's, not the socket of the one just killed.
      await slack.waitFor("the app to connect", () => slack.connections > sessions && slack.connected());
      sessions = slack.connections;
    },
    person(role) {
      if (role === "owner") return owner;
      people++;
      return add(role, `${role === "stranger" ? "stranger" : "member"}${people}`);
    },
    async send(chat, from, text, opts = {}) {
      slack.postMessage({
        channel: channelOf(chat),
        user: users.get(from.id)!,
        text,
        ...(chat.kind === "group" && opts.addressed ? { mention: true } : {}),
        ...(opts.files?.length ? { files: opts.files.map((f) => ({ name: f.name, mime: f.mime, bytes: f.bytes })) } : {}),
      });
    },
    botMessages: (chat) => slack.botMessages(channelOf(chat)).filter((m) => m.files.length === 0 || m.text !== "").map(view),
    deletedMessages: (chat) => slack.deletedBotMessages(channelOf(chat)).map(view),
    async choose(chat, message, label, by) {
      const user = users.get(by.id)!;
      const before = slack.ephemerals.filter((e) => e.user === user.id).length;
      slack.pressButton(message.id, label, user);
      const told = await slack.waitFor(`the bot to answer ${by.name}'s press`, () => slack.ephemerals.filter((e) => e.user === user.id)[before]);
      void chat;
      return told.text;
    },
    sentFiles: (chat) => slack.botMessages(channelOf(chat)).flatMap((m) => m.files.map((f) => ({ name: f.name, bytes: f.bytes }))),
    async holdDelivery(text) {
      // The final text goes out as a new message or as an edit of the preview: whichever comes first is held.
      let held = false;
      const when = (args: Record<string, any>) => !held && args.text === text && (held = true);
      slack.injectFailure({ method: "chat.postMessage", kind: "hang", when });
      slack.injectFailure({ method: "chat.update", kind: "hang", when });
      await slack.waitFor(`the delivery of "${text}" to be held`, () => held);
    },
    async holdAnswer(text) {
      let held = false;
      slack.injectFailure({ method: "chat.postMessage", kind: "apply_then_hang", when: (args) => !held && args.text === text && (held = true) });
      await slack.waitFor(`the part "${text.slice(0, 40)}…" to be posted`, () => held);
    },
    async loseConnection() {
      slack.dropConnection();
    },
    async restoreConnection() {
      slack.restore();
    },
    close: () => slack.close(),
  };
}
