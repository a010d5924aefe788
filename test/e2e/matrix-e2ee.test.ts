// Matrix end to end with encryption: the real daemon (`hearth start`) on matrix-js-sdk with its
// Rust crypto, the owner a second real matrix-js-sdk client with crypto of its own, both talking
// to the fake homeserver. The owner's encrypted direct message is answered, encrypted, exactly
// once, and nothing the homeserver recorded carries either text in the clear.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClientEvent, createClient, RoomEvent, type MatrixClient, type MatrixEvent } from "matrix-js-sdk";
import { VerificationPhase, VerifierEvent, type ShowSasCallbacks } from "matrix-js-sdk/lib/crypto-api/index.js";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeHomeserver, type FakeHomeserver, type FakeUser } from "../support/fake-homeserver.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { picture } from "../support/media-files.ts";
import { decryptAttachment, encryptAttachment } from "../../src/channels/matrix/attachments.ts";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, getChild: () => silent };

let hs: FakeHomeserver;
let model: FakeModel;
let daemon: Daemon | undefined;
let home: string | undefined;
let owner: MatrixClient | undefined;

beforeEach(async () => {
  hs = await startFakeHomeserver();
  model = await startFakeModel();
});
afterEach(async () => {
  owner?.stopClient();
  await cleanupDaemon(daemon, home);
  await hs.close();
  await model.close();
});

async function ownerClient(u: FakeUser): Promise<MatrixClient> {
  const client = createClient({ baseUrl: hs.url, accessToken: u.accessToken, userId: u.userId, deviceId: u.deviceId, logger: silent as never });
  await client.initRustCrypto({ useIndexedDB: false });
  const ready = new Promise<void>((resolve) => client.on(ClientEvent.Sync, (state) => state === "PREPARED" && resolve()));
  await client.startClient({ initialSyncLimit: 10 });
  await ready;
  return client;
}

describe("Matrix end-to-end encryption (daemon e2e)", () => {
  /** The daemon, the owner's client, and their encrypted direct chat, each side's keys uploaded. */
  async function encryptedDm(): Promise<{ bot: FakeUser; roomId: string; client: MatrixClient }> {
    const bot = hs.addUser("hearth", "Hearth");
    const ann = hs.addUser("ann", "Ann");
    home = makeHome({ channels: { matrix: { homeserverUrl: hs.url, userId: bot.userId, ownerIds: [ann.userId] } } });
    daemon = await startDaemon(home, { MATRIX_ACCESS_TOKEN: bot.accessToken, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
    await waitFor("the bot's device keys", () => hs.requests.some((r) => r.userId === bot.userId && r.path.endsWith("/keys/upload") && r.body.includes("device_keys")));
    const client = await ownerClient(ann);
    owner = client;
    const { room_id: roomId } = await client.createRoom({
      is_direct: true,
      invite: [bot.userId],
      initial_state: [{ type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } }],
    } as never);
    await waitFor("the bot to join the direct chat", () => hs.membership(roomId, bot.userId) === "join");
    await waitFor("the owner's client to see the bot joined", () => client.getRoom(roomId)?.getMember(bot.userId)?.membership === "join");
    return { bot, roomId, client };
  }

  /** What the owner's client shows: the bot's messages, each at its latest edit, decrypted. */
  function shownTo(client: MatrixClient, bot: FakeUser): Map<string, string> {
    const shown = new Map<string, string>();
    client.on(RoomEvent.Timeline, (event: MatrixEvent) => {
      void client.decryptEventIfNeeded(event).then(() => {
        if (event.getSender() !== bot.userId || event.getType() !== "m.room.message") return;
        const c = event.getContent();
        const rel = c["m.relates_to"] as { rel_type?: string; event_id?: string } | undefined;
        if (rel?.rel_type === "m.replace") shown.set(rel.event_id!, String(c["m.new_content"]?.body));
        else if (!shown.has(event.getId()!)) shown.set(event.getId()!, String(c.body));
      });
    });
    return shown;
  }

  /** The device line of `hearth status`. */
  async function deviceStatus(): Promise<string | undefined> {
    const status = await daemon!.hearth(["status", "--json"]);
    return (JSON.parse(status.stdout) as { channels: Array<{ id: string; detail?: string }> }).channels.find((c) => c.id === "matrix")?.detail;
  }

  it("the owner's encrypted direct message is answered, encrypted, exactly once, and the homeserver never sees either text", async () => {
    const { bot, roomId, client: owner } = await encryptedDm();

    const question = "conformance-secret question: what is the colour of the sky?";
    const answer = "Blue, and only you can read this: sapphire-7731.";
    const shown = shownTo(owner, bot);
    model.enqueue(text(answer));
    await owner.sendTextMessage(roomId, question);
    await waitFor("the answer, decrypted by the owner", () => [...shown.values()].includes(answer), 30_000);
    await waitFor("the daemon to record the message's outcome", () => inboxSettled(home!));

    // The model saw the plaintext (Hearth decrypted it); the answer came once.
    expect(model.requests).toHaveLength(1);
    expect(JSON.stringify(model.requests[0]!.body)).toContain(question);
    const botMessages = hs.events(roomId).filter((e) => e.sender === bot.userId && e.type !== "m.room.member" && e.type !== "m.reaction");
    expect(botMessages.every((e) => e.type === "m.room.encrypted")).toBe(true);
    expect([...shown.values()]).toEqual([answer]);

    // Nothing the homeserver received, from either side, carries either text in the clear.
    for (const r of hs.requests) {
      expect(r.body).not.toContain("conformance-secret");
      expect(r.body).not.toContain("sapphire-7731");
    }
    expect(hs.requests.some((r) => r.userId === bot.userId && /\/send\/m\.room\.encrypted\//.test(r.path))).toBe(true);

    // `hearth status` says encryption is on, and whether the device is verified.
    expect(await deviceStatus()).toMatch(/end-to-end encryption on · device DEVHEARTH, key (\S{4} ){10}\S{3} \(not verified yet: verify it by emoji from your client, or compare its key\)/);
  }, 90_000);

  it("files go both ways encrypted: the owner's photo reaches the model, the bot's file is uploaded as ciphertext the owner decrypts", async () => {
    const { bot, roomId, client: owner } = await encryptedDm();
    const photo = await picture("jpeg");
    const sealed = encryptAttachment(photo);
    const up = await owner.uploadContent(Buffer.from(sealed.data), { type: "application/octet-stream" });
    model.enqueue(text("A red square."));
    await owner.sendMessage(roomId, { msgtype: "m.image", body: "square.jpg", filename: "square.jpg", info: { mimetype: "image/jpeg", size: photo.byteLength }, file: { ...sealed.info, url: up.content_uri } } as never);
    await model.waitForRequests(1);
    const image = lastUserContent(model.requests[0]!).find((b) => b.type === "image");
    expect(image?.source).toEqual({ type: "base64", media_type: "image/jpeg", data: Buffer.from(photo).toString("base64") });
    await waitFor("the first answer's outcome", () => inboxSettled(home!));

    const png = await picture("png");
    writeFileSync(join(home!, "workspace", "out.png"), png);
    model.enqueue(toolCall("send_file", { path: "out.png" }), text("Sent."));
    await owner.sendTextMessage(roomId, "send me the picture");
    const sent = await hs.waitFor("the bot's file", () => {
      for (const e of hs.events(roomId).filter((x) => x.sender === bot.userId && x.type === "m.room.encrypted")) {
        const clear = owner.getRoom(roomId)?.findEventById(e.event_id);
        const c = clear?.getContent();
        if (c?.file?.url) return c.file as Parameters<typeof decryptAttachment>[1];
      }
      return undefined;
    }, 30_000);
    expect(Buffer.from(decryptAttachment(hs.media(sent.url)!.bytes, sent)).equals(Buffer.from(png))).toBe(true);
    // The homeserver holds ciphertext only: neither picture's bytes were uploaded as they are.
    const uploads = hs.requests.filter((r) => r.path.startsWith("/_matrix/media/v3/upload"));
    expect(uploads).toHaveLength(2);
    for (const bytes of [photo, png]) expect(uploads.some((u) => u.raw.includes(Buffer.from(bytes)))).toBe(false);
    expect(uploads.map((u) => u.raw.byteLength).sort()).toEqual([photo.byteLength, png.byteLength].sort());
  }, 90_000);

  /**
   * The owner writes, the bot answers; `restart` ends the daemon (SIGTERM or SIGKILL) and starts
   * it again on the same home; the owner writes again in the same encrypted chat (with the same
   * room key: their client has no reason to make a new one) and is answered once, encrypted.
   */
  async function answeredAcross(restart: (d: Daemon) => Promise<unknown>): Promise<void> {
    const { bot, roomId, client: owner } = await encryptedDm();
    const shown = shownTo(owner, bot);
    const device = await deviceStatus();
    expect(device).toMatch(/· 1 room · end-to-end encryption on · device DEVHEARTH, key /);
    model.enqueue(text("First answer: cobalt-1102."));
    await owner.sendTextMessage(roomId, "conformance-secret one");
    await waitFor("the first answer, decrypted by the owner", () => [...shown.values()].includes("First answer: cobalt-1102."), 30_000);
    await waitFor("the first message's outcome", () => inboxSettled(home!));
    // Ended at once: no time for a write that happens after a delay.
    await restart(daemon!);
    expect(statSync(join(home!, "secrets.matrix-crypto.json")).mode & 0o777).toBe(0o600);
    const uploadsBefore = hs.requests.length;
    daemon = await startDaemon(home!, { MATRIX_ACCESS_TOKEN: bot.accessToken, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
    // The same device with the same keys: nothing new uploaded for it, the same key shown.
    expect(await deviceStatus()).toBe(device);

    model.enqueue(text("Second answer: cobalt-2203."));
    await owner.sendTextMessage(roomId, "conformance-secret two");
    await waitFor("the second answer, decrypted by the owner", () => [...shown.values()].includes("Second answer: cobalt-2203."), 30_000);
    await waitFor("the second message's outcome", () => inboxSettled(home!));

    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[1]!.body)).toContain("conformance-secret two");
    expect([...shown.values()]).toEqual(["First answer: cobalt-1102.", "Second answer: cobalt-2203."]);
    expect(daemon!.log()).not.toContain("matrix.undecryptable");
    const botMessages = hs.events(roomId).filter((e) => e.sender === bot.userId && e.type !== "m.room.member" && e.type !== "m.reaction");
    expect(botMessages.length).toBeGreaterThanOrEqual(2);
    expect(botMessages.every((e) => e.type === "m.room.encrypted")).toBe(true);
    expect(hs.requests.slice(uploadsBefore).some((r) => r.userId === bot.userId && r.path.endsWith("/keys/upload") && r.body.includes("device_keys"))).toBe(false);
    for (const r of hs.requests) {
      expect(r.body).not.toContain("conformance-secret");
      expect(r.body).not.toContain("cobalt-");
    }
  }

  it("after a restart the bot is the same device with the same keys: the owner's next encrypted message is answered, encrypted, once", async () => {
    await answeredAcross((d) => d.stop());
  }, 120_000);

  it("after a kill -9 right after an answer, the next start still answers the owner's encrypted message", async () => {
    await answeredAcross(async (d) => {
      d.proc.kill("SIGKILL");
      await d.exited;
    });
  }, 120_000);

  it("the owner verifies the bot's device by emoji: hearth status shows the emojis the owner's client shows, both sides end verified, and a restart keeps it", async () => {
    const { bot, roomId, client: owner } = await encryptedDm();
    // The bot answers in the encrypted chat first: it then knows the owner's devices (a request
    // from a device it does not know yet is dropped by the crypto).
    const answers = shownTo(owner, bot);
    model.enqueue(text("Hello."));
    await owner.sendTextMessage(roomId, "hi");
    await waitFor("the bot's answer", () => [...answers.values()].includes("Hello."), 30_000);
    const crypto = owner.getCrypto()!;
    const request = await crypto.requestDeviceVerification(bot.userId, "DEVHEARTH");
    await waitFor("the bot to accept the request", () => request.phase === VerificationPhase.Ready);
    const verifier = await request.startVerification("m.sas.v1");
    const sas = new Promise<ShowSasCallbacks>((resolve) => verifier.on(VerifierEvent.ShowSas, resolve));
    const verified = verifier.verify();
    const shown = await sas;
    const emojis = shown.sas.emoji!.map(([emoji, name]) => `${emoji} ${name}`).join(" · ");
    expect(shown.sas.emoji).toHaveLength(7);
    // The owner compares what their client shows with what Hearth shows, then presses "They match".
    await waitFor("hearth status to show the same emojis", async () => (await deviceStatus())?.includes(`verifying with ${owner.getUserId()} (device ${owner.getDeviceId()}): compare ${emojis} with your client's`) === true);
    await shown.confirm();
    await verified;
    expect((await crypto.getDeviceVerificationStatus(bot.userId, "DEVHEARTH"))?.isVerified()).toBe(true);
    const trusted = new RegExp(`device DEVHEARTH, key [^(]+\\(verified by emoji with ${owner.getUserId()} \\(device ${owner.getDeviceId()}\\)\\)$`);
    await waitFor("hearth status to say the device is verified", async () => trusted.test((await deviceStatus()) ?? ""));

    await daemon!.stop();
    daemon = await startDaemon(home!, { MATRIX_ACCESS_TOKEN: bot.accessToken, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
    expect(await deviceStatus()).toMatch(trusted);
  }, 120_000);

  it("a verification request from someone other than the owner is cancelled, and the bot's device stays unverified", async () => {
    const { bot } = await encryptedDm();
    const bob = await ownerClient(hs.addUser("bob", "Bob"));
    try {
      const crypto = bob.getCrypto()!;
      // Bob shares an encrypted room with the bot, so his client tracks the bot's devices.
      const { room_id: roomId } = await bob.createRoom({ is_direct: true, invite: [bot.userId], initial_state: [{ type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } }] } as never);
      await waitFor("the bot to join Bob's chat", () => hs.membership(roomId, bot.userId) === "join");
      // Bob writes and is told how pairing works: the bot then knows his device.
      const told = shownTo(bob, bot);
      await waitFor("Bob's client to see the bot joined", () => bob.getRoom(roomId)?.getMember(bot.userId)?.membership === "join");
      await bob.sendTextMessage(roomId, "hello?");
      await waitFor("the bot's pairing answer to Bob", () => told.size > 0, 30_000);
      let request: Awaited<ReturnType<typeof crypto.requestDeviceVerification>> | undefined;
      await waitFor("Bob's client to know the bot's device", async () => {
        request = await crypto.requestDeviceVerification(bot.userId, "DEVHEARTH").catch(() => undefined);
        return request !== undefined;
      });
      await waitFor("the bot to cancel the request", () => request!.phase === VerificationPhase.Cancelled);
      expect(request!.cancellingUserId).toBe(bot.userId);
      expect(await deviceStatus()).toMatch(/\(not verified yet: verify it by emoji from your client, or compare its key\)$/);
    } finally {
      bob.stopClient();
    }
  }, 90_000);
});
