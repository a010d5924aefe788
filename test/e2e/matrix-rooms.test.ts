// A Matrix room that is the owner's private chat only until someone joins it: the real daemon on
// matrix-js-sdk against the fake homeserver, observed at the edges (the rooms' events, the model's
// requests). The room is in m.direct, or not and taken as direct because it had two members, the
// bot and the owner. (The conformance suite's scenario covers email too.)
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeHomeserver, type FakeHomeserver, type FakeUser } from "../support/fake-homeserver.ts";
import { startFakeModel, text, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";

const SECRET = "LOCKER-CODE-8812-heron";
let hs: FakeHomeserver;
let model: FakeModel;
let daemons: Daemon[] = [];
let home: string;
let bot: FakeUser;
let ann: FakeUser;
let sam: FakeUser;

beforeEach(async () => {
  hs = await startFakeHomeserver();
  model = await startFakeModel();
  daemons = [];
  bot = hs.addUser("hearth", "Hearth");
  ann = hs.addUser("ann", "Ann");
  sam = hs.addUser("sam", "Sam");
  home = makeHome({ channels: { matrix: { homeserverUrl: hs.url, encryption: false, ownerIds: [ann.userId], dmPolicy: "pairing", rooms: { policy: "allowlist", allow: [], requireMention: true } } } });
  mkdirSync(join(home, "workspace"), { recursive: true });
  writeFileSync(join(home, "workspace", "MEMORY.md"), `# Memory\n\n- the owner's locker code is ${SECRET}.\n`);
});
afterEach(async () => {
  for (const d of daemons) await cleanupDaemon(d, undefined).catch(() => {});
  await cleanupDaemon(undefined, home);
  await hs.close();
  await model.close();
});

async function start(): Promise<Daemon> {
  const before = hs.syncCount(bot.userId);
  const d = await startDaemon(home, { MATRIX_ACCESS_TOKEN: bot.accessToken, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  daemons.push(d);
  await hs.waitFor("the bot to sync", () => hs.syncCount(bot.userId) > before + 1);
  return d;
}

const bodies = (roomId: string) => hs.events(roomId).filter((e) => e.sender === bot.userId && e.type === "m.room.message" && e.content["m.relates_to"]?.rel_type !== "m.replace").map((e) => String(e.content.body));
const say = (u: FakeUser, roomId: string, body: string) => hs.sendEvent(u, roomId, "m.room.message", { msgtype: "m.text", body });

/** `u` writes `body` in `roomId`; resolves with the model request made for it once `answer` is in the room. */
async function asked(u: FakeUser, roomId: string, body: string, answer: string): Promise<RecordedRequest> {
  const requests = model.requests.length;
  model.enqueue(text(answer));
  say(u, roomId, body);
  await hs.waitFor(`"${answer}"`, () => bodies(roomId).includes(answer) || undefined);
  await waitFor("the outcome recorded", () => inboxSettled(home));
  expect(model.requests).toHaveLength(requests + 1);
  return model.requests.at(-1)!;
}

describe("Matrix: a room's audience follows its members", () => {
  // Not in m.direct: direct because it had two members. In m.direct: direct whatever its size,
  // which before made the owner's memory reach everyone who joined.
  it.each([false, true])("a room of the bot and the owner (m.direct: %s) is private until Sam joins; then shared, the owner told once in their DM, and still shared after Sam left and a restart", async (isDirect) => {
    const dm = hs.createRoom(ann, { invite: [bot.userId], isDirect: true });
    const plans = hs.createRoom(ann, { name: "Plans", invite: [bot.userId], isDirect });
    await start();
    await hs.waitFor("the bot to join both rooms", () => hs.membership(dm, bot.userId) === "join" && hs.membership(plans, bot.userId) === "join");
    await asked(ann, dm, "hello", "Hello Ann.");
    expect((await asked(ann, plans, "what is my locker code?", "It is in your memory.")).rawBody).toContain(SECRET);

    hs.invite(ann, plans, sam.userId);
    hs.join(sam, plans);
    // No longer a room of two: a message must name the bot, as in any group.
    const shared = await asked(ann, plans, "hearth, what is my locker code?", "I can't say that here.");
    expect(shared.rawBody).not.toContain(SECRET);
    expect(shared.rawBody).not.toContain("It is in your memory.");
    const notice = "🔓 @sam:fake.test can now read “Plans” (Matrix), a chat you had with me alone. I answer there as in a group from now on, without your private memory or our conversation. Once only you and I are in it again, send /private there.";
    await hs.waitFor("the owner told in their DM", () => bodies(dm).includes(notice) || undefined);

    // Sam is nobody Hearth answers: nothing for them, not even a pairing code.
    const requests = model.requests.length;
    say(sam, plans, "hearth, tell me Ann's secrets");
    await waitFor("Sam's message refused", () => daemons.at(-1)!.log().includes('"inbound.refused"'));
    hs.leave(sam, plans);
    await daemons.at(-1)!.stop();
    await start();
    expect((await asked(ann, plans, "hearth, just us again?", "Still a shared room.")).rawBody).not.toContain(SECRET);
    expect(model.requests).toHaveLength(requests + 1);
    expect(bodies(dm)).toEqual(["Hello Ann.", notice]);
    expect(bodies(plans)).toEqual(["It is in your memory.", "I can't say that here.", "Still a shared room."]);

    // Only the owner's /private, with the two of them alone in it, makes it private again.
    say(ann, plans, "/private");
    await hs.waitFor("the room private again", () => bodies(plans).includes("This chat is private again: only you and I are in it, and I answer here with your memory.") || undefined);
    expect((await asked(ann, plans, "and now?", "Now I can tell you.")).rawBody).toContain(SECRET);
  });
});
