// What `hearth doctor --online` and `hearth setup` ask of a homeserver, against the fake one:
// the token checked by whoami, and the owner found by a direct message carrying the one-time code.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matrix } from "../../../src/channels/matrix/descriptor.ts";
import type { SetupSender } from "../../../src/channels/descriptor.ts";
import { startFakeHomeserver, type FakeHomeserver } from "../../support/fake-homeserver.ts";
import { freePort } from "../../support/telegram-emulator.ts";

let hs: FakeHomeserver;
beforeEach(async () => {
  hs = await startFakeHomeserver();
});
afterEach(async () => {
  await hs.close();
});

const config = (accessToken: string, homeserverUrl = hs.url) => matrix.config!.schema.parse({ homeserverUrl, accessToken }) as Parameters<NonNullable<typeof matrix.checkOnline>>[0];

describe("Matrix token check (doctor --online, setup)", () => {
  it("names the bot the token belongs to (account/whoami)", async () => {
    const bot = hs.addUser("hearth");
    expect(await matrix.checkOnline!(config(bot.accessToken))).toEqual({ ok: true, detail: "the bot is @hearth:fake.test" });
    expect(hs.requests.at(-1)).toMatchObject({ method: "GET", path: "/_matrix/client/v3/account/whoami" });
  });

  it("says a refused token is refused, without echoing it", async () => {
    const r = await matrix.checkOnline!(config("syt_not_a_real_token_at_all"));
    expect(r.ok).toBe(false);
    expect(r.detail).toContain("refused the access token (M_UNKNOWN_TOKEN)");
    expect(r.detail).not.toContain("syt_not_a_real_token_at_all");
  });

  it("says an unreachable homeserver cannot be reached, and sends no malformed token", async () => {
    const port = await freePort();
    const down = await matrix.checkOnline!(config("syt_some_token_that_is_long", `http://127.0.0.1:${port}`));
    expect(down).toMatchObject({ ok: false });
    expect(down.detail).toContain(`127.0.0.1:${port} cannot be reached`);
    const malformed = await matrix.checkOnline!({ ...config("syt_some_token_that_is_long"), accessToken: "short" });
    expect(malformed.detail).toContain("does not look like one");
  });
});

describe("Matrix owner handshake (setup)", () => {
  it("joins the direct chat it is invited to; only a message with the code names the owner, who is greeted", async () => {
    const bot = hs.addUser("hearth", "Hearth");
    const ann = hs.addUser("ann", "Ann");
    const sam = hs.addUser("sam", "Sam");
    const ignored: SetupSender[] = [];
    let ready = false;
    const found = matrix.setup!.findOwner(bot.accessToken, hs.url, {
      code: "ABCD2345",
      botName: bot.userId,
      waitMs: 15_000,
      greeting: "Hello, owner.",
      ready: () => (ready = true),
      accept: async () => true,
      ignored: (s) => void ignored.push(s),
    });
    await hs.waitFor("the handshake to listen", () => ready);
    const samRoom = hs.createRoom(sam, { invite: [bot.userId], isDirect: true });
    await hs.waitFor("the bot to join Sam's chat", () => hs.membership(samRoom, bot.userId) === "join");
    hs.sendEvent(sam, samRoom, "m.room.message", { msgtype: "m.text", body: "let me in" });
    await hs.waitFor("Sam's message to be ignored", () => ignored.length === 1);
    const annRoom = hs.createRoom(ann, { invite: [bot.userId], isDirect: true });
    await hs.waitFor("the bot to join Ann's chat", () => hs.membership(annRoom, bot.userId) === "join");
    hs.sendEvent(ann, annRoom, "m.room.message", { msgtype: "m.text", body: " abcd2345 " });
    expect(await found).toEqual({ kind: "owner", sender: { id: ann.userId, name: ann.userId } });
    expect(ignored.map((s) => s.id)).toEqual([sam.userId]);
    expect(hs.events(annRoom).filter((e) => e.sender === bot.userId && e.type === "m.room.message").map((e) => e.content.body)).toEqual(["Hello, owner."]);
    expect(hs.events(samRoom).filter((e) => e.sender === bot.userId && e.type === "m.room.message")).toEqual([]);
  });
});
