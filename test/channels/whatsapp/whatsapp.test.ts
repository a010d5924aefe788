// WhatsApp above the socket interface, in process: the message rules ("Message yourself" when
// linked to the owner's own number, hidden numbers), Hearth's marked answers in that chat, and
// the credential store (bytes kept exactly, a damaged file named, left out of backups).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { snapshotHome } from "../../../src/backup/snapshot.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { AUTH_FILE, openAuthStore } from "../../../src/channels/whatsapp/auth-store.ts";
import { createWhatsAppChannel, SELF_CHAT_MARK } from "../../../src/channels/whatsapp/channel.ts";
import { normalizeWhatsApp } from "../../../src/channels/whatsapp/inbound.ts";
import type { WhatsAppEvent, WhatsAppMessage, WhatsAppOutgoing } from "../../../src/channels/whatsapp/socket.ts";
import type { InboundMessage } from "../../../src/channels/channel.ts";
import { waitFor } from "../../support/daemon.ts";

const OWNER = "4915111111111";
const message = (m: Partial<WhatsAppMessage>): WhatsAppMessage => ({ id: "M1", chatJid: `${OWNER}@s.whatsapp.net`, sender: OWNER, senderName: "Ann", fromMe: false, timestamp: 1, text: "hi", mentioned: [], ...m });

describe("WhatsApp inbound", () => {
  const rules = (me: string, sent: string[] = []) => ({ me, ownerIds: [OWNER], namePattern: null, sentByHearth: (id: string) => sent.includes(id) });

  it("the owner's private chat is the owner's; a hidden number (a LID) is never the owner", () => {
    const r = normalizeWhatsApp(message({}), rules("4915100000000"));
    expect(r.kind === "inbound" && r.message).toMatchObject({ id: `${OWNER}:M1`, chat: { id: OWNER, type: "dm" }, sender: { id: OWNER, isOwner: true }, addressed: true });
    const hidden = normalizeWhatsApp(message({ chatJid: "120363000000000001@g.us", sender: `${OWNER}@lid` }), rules("4915100000000"));
    expect(hidden.kind === "inbound" && [hidden.message.sender.isOwner, hidden.message.addressed]).toEqual([false, false]);
  });

  it("linked to the owner's own number: \"Message yourself\" is the owner talking; Hearth's own answers there and other own messages are not read", () => {
    const self = normalizeWhatsApp(message({ fromMe: true }), rules(OWNER));
    expect(self.kind === "inbound" && self.message.sender).toMatchObject({ id: OWNER, isOwner: true });
    expect(normalizeWhatsApp(message({ id: "BOT1", fromMe: true }), rules(OWNER, ["BOT1"]))).toEqual({ kind: "ignored", reason: "Hearth's own answer" });
    expect(normalizeWhatsApp(message({ fromMe: true, chatJid: "4915222222222@s.whatsapp.net" }), rules(OWNER))).toEqual({ kind: "ignored", reason: "own message" });
    expect(normalizeWhatsApp(message({ fromMe: true }), rules("4915100000000"))).toEqual({ kind: "ignored", reason: "own message" });
  });

  it("in a group: addressed by a mention of the linked number or a reply to it", () => {
    const group = { chatJid: "120363000000000001@g.us", sender: "4915222222222" };
    expect(normalizeWhatsApp(message({ ...group }), rules(OWNER)).kind === "inbound").toBe(true);
    const plain = normalizeWhatsApp(message({ ...group }), rules("4915100000000"));
    const mentioned = normalizeWhatsApp(message({ ...group, mentioned: ["4915100000000"] }), rules("4915100000000"));
    const replied = normalizeWhatsApp(message({ ...group, quoted: { id: "BOT7", sender: "4915100000000", text: "earlier" } }), rules("4915100000000"));
    expect([plain, mentioned, replied].map((r) => r.kind === "inbound" && r.message.addressed)).toEqual([false, true, true]);
  });
});

describe("WhatsApp answers in \"Message yourself\"", () => {
  it("are marked, and their echo is not read back as the owner's message", async () => {
    const home = mkdtempSync(join(tmpdir(), "hearth-wa-"));
    const sent: Array<{ jid: string; what: WhatsAppOutgoing }> = [];
    let on: (e: WhatsAppEvent) => void = () => {};
    const channel = createWhatsAppChannel(
      { ownerIds: [OWNER], namePattern: null, pairingNumber: null },
      {
        log: silentLogger,
        store: openAuthStore(home),
        connect: async (o) => {
          on = o.on;
          queueMicrotask(() => on({ type: "open", me: { number: OWNER } }));
          return { send: async (jid, what) => (sent.push({ jid, what }), `BOT${sent.length}`), presence: async () => {}, end() {} };
        },
      },
    );
    const inbound: InboundMessage[] = [];
    try {
      await channel.start((m) => void inbound.push(m));
      await channel.send({ channel: "whatsapp", chatId: OWNER }, "Here is your answer.");
      expect(sent).toEqual([{ jid: `${OWNER}@s.whatsapp.net`, what: { kind: "text", text: `${SELF_CHAT_MARK}Here is your answer.` } }]);
      on({ type: "message", message: message({ id: "BOT1", fromMe: true, text: `${SELF_CHAT_MARK}Here is your answer.` }) });
      on({ type: "message", message: message({ id: "OWN2", fromMe: true, text: "thanks" }) });
      await waitFor("the owner's message", () => inbound.length > 0);
      expect(inbound.map((m) => m.text)).toEqual(["thanks"]);
    } finally {
      await channel.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("WhatsApp credential store", () => {
  let home: string;
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("keeps bytes exactly across a reopen, writes one file atomically (no temp file left), and forgets all on clear", () => {
    home = mkdtempSync(join(tmpdir(), "hearth-wa-"));
    const store = openAuthStore(home);
    store.writeCreds({ me: "49151", key: Buffer.from([0, 255, 7]) });
    store.writeKeys({ session: { a: { record: new Uint8Array([9, 8]) }, b: { record: Buffer.from("x") } } });
    store.writeKeys({ session: { b: null } });
    expect(readdirSync(home)).toEqual([AUTH_FILE]);
    const again = openAuthStore(home);
    expect(again.readCreds()).toEqual({ me: "49151", key: Buffer.from([0, 255, 7]) });
    expect(again.readKeys("session", ["a", "b"])).toEqual({ a: { record: Buffer.from([9, 8]) } });
    again.clear();
    expect(readdirSync(home)).toEqual([]);
    expect(openAuthStore(home).readCreds()).toBeNull();
  });

  it("a damaged file is an error naming it and the way out, never a silent new link", () => {
    home = mkdtempSync(join(tmpdir(), "hearth-wa-"));
    writeFileSync(join(home, AUTH_FILE), "{ half");
    expect(() => openAuthStore(home)).toThrow(/secrets\.whatsapp\.json cannot be read .*restore it from a backup made with --include-secrets, or delete it and link WhatsApp again/);
  });

  it("backups leave it out as a secret unless secrets are included", () => {
    home = mkdtempSync(join(tmpdir(), "hearth-wa-"));
    openAuthStore(home).writeCreds({ me: "49151" });
    const without = snapshotHome(home, { includeSecrets: false, backupDirs: [] }, () => {});
    expect(without.left).toEqual([{ path: AUTH_FILE, reason: "secret" }]);
    const withSecrets = snapshotHome(home, { includeSecrets: true, backupDirs: [] }, () => {});
    expect(withSecrets.files.map((f) => f.path)).toEqual([AUTH_FILE]);
  });
});
