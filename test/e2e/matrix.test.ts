// Matrix end to end without encryption: the real daemon on matrix-js-sdk against the fake
// homeserver and the fake model, observed at the edges (the room's events, the model's requests).
// What the conformance suite does not cover: invites, threads, being named, HTML bodies, the
// homeserver's rate limit, and a restart that neither loses nor repeats a message.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeHomeserver, type FakeHomeserver, type FakeUser, type MatrixEvent } from "../support/fake-homeserver.ts";
import { lastUserContent, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let hs: FakeHomeserver;
let model: FakeModel;
let daemons: Daemon[] = [];
let home: string | undefined;
let bot: FakeUser;
let ann: FakeUser;
let sam: FakeUser;

beforeEach(async () => {
  hs = await startFakeHomeserver();
  model = await startFakeModel();
  daemons = [];
  home = undefined;
  bot = hs.addUser("hearth", "Hearth");
  ann = hs.addUser("ann", "Ann");
  sam = hs.addUser("sam", "Sam");
});
afterEach(async () => {
  for (const d of daemons) await cleanupDaemon(d, undefined).catch(() => {});
  await cleanupDaemon(undefined, home);
  await hs.close();
  await model.close();
});

async function start(rooms: string[] = []): Promise<Daemon> {
  home ??= makeHome({ channels: { matrix: { homeserverUrl: hs.url, encryption: false, ownerIds: [ann.userId], dmPolicy: "disabled", rooms: { policy: "allowlist", allow: rooms, requireMention: true } } } });
  const before = hs.syncCount(bot.userId);
  const d = await startDaemon(home, { MATRIX_ACCESS_TOKEN: bot.accessToken, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  daemons.push(d);
  await hs.waitFor("the bot to sync", () => hs.syncCount(bot.userId) > before + 1);
  return d;
}

/** The bot's messages in a room (edits folded in), each with the content of its latest version. */
function botMessages(roomId: string): Array<{ event: MatrixEvent; content: Record<string, any> }> {
  const events = hs.events(roomId).filter((e) => e.sender === bot.userId && e.type === "m.room.message");
  return events
    .filter((e) => e.content["m.relates_to"]?.rel_type !== "m.replace")
    .map((event) => {
      const edits = events.filter((x) => x.content["m.relates_to"]?.rel_type === "m.replace" && x.content["m.relates_to"].event_id === event.event_id);
      return { event, content: edits.at(-1)?.content["m.new_content"] ?? event.content };
    });
}

const say = (u: FakeUser, roomId: string, body: string, extra: Record<string, unknown> = {}) => hs.sendEvent(u, roomId, "m.room.message", { msgtype: "m.text", body, ...extra });

describe("Matrix (daemon e2e)", () => {
  it("accepts the owner's invites and declines a stranger's; in a listed room answers in the thread where it is named, with HTML and a plain fallback", async () => {
    const family = hs.createRoom(ann, { name: "Family", invite: [bot.userId] });
    hs.invite(ann, family, sam.userId);
    hs.join(sam, family);
    await start([family]);
    await hs.waitFor("the bot to join the owner's room", () => hs.membership(family, bot.userId) === "join");
    const strangers = hs.createRoom(sam, { name: "Spam", invite: [bot.userId] });
    await hs.waitFor("the stranger's invite to be declined", () => hs.membership(strangers, bot.userId) === "leave");

    const root = say(sam, family, "Where shall we eat on Friday?");
    const thread = { "m.relates_to": { rel_type: "m.thread", event_id: root.event_id, is_falling_back: true, "m.in_reply_to": { event_id: root.event_id } } };
    say(sam, family, "I think pasta", thread);
    model.enqueue(text("Try **Luigi's** for `pasta`."));
    say(sam, family, "hearth, what do you suggest?", thread);
    await hs.waitFor("the answer in the thread", () => botMessages(family).find((m) => m.content.body === "Try **Luigi's** for `pasta`."));
    await waitFor("the outcome recorded", () => inboxSettled(home!));
    const [answer, ...more] = botMessages(family);
    expect(more).toEqual([]);
    expect(answer!.event.content["m.relates_to"]).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
    expect(answer!.content).toMatchObject({ body: "Try **Luigi's** for `pasta`.", format: "org.matrix.custom.html", formatted_body: "Try <strong>Luigi's</strong> for <code>pasta</code>." });
    expect(model.requests).toHaveLength(1);
    const asked = JSON.stringify(lastUserContent(model.requests[0]!));
    expect(asked).toContain("hearth, what do you suggest?");
  });

  it("waits out the homeserver's 429 (Retry-After) and delivers the answer once", async () => {
    const dm = hs.createRoom(ann, { invite: [bot.userId], isDirect: true });
    await start();
    await hs.waitFor("the bot to join the DM", () => hs.membership(dm, bot.userId) === "join");
    hs.inject({ method: "PUT", path: /\/send\/m\.room\.message\//, reply: { status: 429, body: { errcode: "M_LIMIT_EXCEEDED", error: "Too many requests" }, headers: { "Retry-After": "1" } } });
    model.enqueue(text("Answered after the rate limit."));
    say(ann, dm, "hello");
    await hs.waitFor("the answer", () => botMessages(dm).find((m) => m.content.body === "Answered after the rate limit."));
    await waitFor("the outcome recorded", () => inboxSettled(home!));
    expect(botMessages(dm).map((m) => m.content.body)).toEqual(["Answered after the rate limit."]);
    const sends = hs.requests.filter((r) => r.userId === bot.userId && r.method === "PUT" && r.path.includes("/send/m.room.message/"));
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it("after a restart answers what came while it was down, once, and nothing before it again", async () => {
    const dm = hs.createRoom(ann, { invite: [bot.userId], isDirect: true });
    const d = await start();
    await hs.waitFor("the bot to join the DM", () => hs.membership(dm, bot.userId) === "join");
    model.enqueue(text("First answer."));
    say(ann, dm, "first");
    await hs.waitFor("the first answer", () => botMessages(dm).find((m) => m.content.body === "First answer."));
    await waitFor("the outcome recorded", () => inboxSettled(home!));
    await d.stop();
    say(ann, dm, "second, while you were away");
    model.enqueue(text("Second answer."));
    await start();
    await hs.waitFor("the second answer", () => botMessages(dm).find((m) => m.content.body === "Second answer."));
    await waitFor("the outcome recorded", () => inboxSettled(home!));
    expect(botMessages(dm).map((m) => m.content.body)).toEqual(["First answer.", "Second answer."]);
    expect(model.requests).toHaveLength(2);
  });

  it("hearth doctor --online checks the access token against the homeserver (whoami), and says when it is refused", async () => {
    home = makeHome({ channels: { matrix: { homeserverUrl: hs.url, encryption: false, ownerIds: [ann.userId] } } });
    const env = (token: string) => isolatedEnv({ HEARTH_HOME: home!, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url, MATRIX_ACCESS_TOKEN: token });
    const good = await runHearth(["doctor", "--online"], env(bot.accessToken), { timeoutMs: 40_000 });
    expect(good.stdout).toMatch(/matrix.*the bot is @hearth:fake\.test/i);
    const bad = await runHearth(["doctor", "--online"], env("syt_revoked_token_0123456789"), { timeoutMs: 40_000 });
    expect(bad.stdout).toMatch(/matrix.*refused the access token \(M_UNKNOWN_TOKEN\)/i);
    expect(bad.stdout).not.toContain("syt_revoked_token_0123456789");
  });

  it("a refused access token: the daemon runs on, and `hearth status` shows Matrix failed with the reason, never the token", async () => {
    home = makeHome({ channels: { matrix: { homeserverUrl: hs.url, encryption: false, ownerIds: [ann.userId] } } });
    const d = await startDaemon(home, { MATRIX_ACCESS_TOKEN: "syt_revoked_token_0123456789", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
    daemons.push(d);
    let matrix: { state: string; reason?: string } | undefined;
    await waitFor("Matrix to be reported failed", async () => {
      const r = await d.hearth(["status", "--json"]);
      matrix = (JSON.parse(r.stdout) as { channels: Array<{ id: string; state: string; reason?: string }> }).channels.find((c) => c.id === "matrix");
      return matrix?.state === "failed";
    });
    expect(matrix!.reason).toMatch(/refused the access token \(M_UNKNOWN_TOKEN\); log the bot in again/);
    expect(d.log()).not.toContain("syt_revoked_token_0123456789");
  });
});
