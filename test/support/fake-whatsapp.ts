// The fake WhatsApp the daemon's WhatsApp channel reaches through fake-whatsapp-socket.ts (loaded
// in place of Baileys): a loopback server that plays WhatsApp's side — linking (QR or pairing
// code, then the phone's approval), people's messages (kept while the device is offline and
// delivered when it connects, as WhatsApp does), the bot's sends, a dropped connection, and the
// device being logged out. Every call is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { waitFor } from "./daemon.ts";

export const WA_BOT = "4915100000000";

export interface FakeWhatsAppSent {
  id: string;
  jid: string;
  text: string;
  file?: { name: string; mime: string; bytes: Uint8Array; voice: boolean; asPhoto: boolean };
  quote: { id: string; sender: string } | null;
}

export interface IncomingWhatsApp {
  from: { number: string; name: string };
  /** A group JID (`…@g.us`); absent: the person's private chat. */
  group?: string;
  text?: string;
  mentionsBot?: boolean;
  quote?: { id: string; sender: string; text?: string };
  media?: { kind: "image" | "document" | "audio" | "video"; mime: string; fileName?: string; bytes: Uint8Array; voice?: boolean };
  /** Sent by the linked account itself (its own phone). */
  fromMe?: boolean;
}

export interface FakeWhatsApp {
  readonly url: string;
  /** The daemon's environment that puts the fake in the library's place. */
  env(): Record<string, string>;
  readonly connectsOpened: number;
  connected(): boolean;
  /** A device is connected but not linked, waiting for the phone's approval. */
  waitingForLink(): boolean;
  /** How the device asked to be linked last: the pairing code's number, or "qr". */
  readonly pairingAsked: string[];
  /** The phone approves the link: the device is linked to `number` and its connection opens. */
  link(number?: string): void;
  receive(m: IncomingWhatsApp): string;
  /** The bot's messages to `jid` (a person's `…@s.whatsapp.net` or a group's `…@g.us`), oldest first. */
  messages(jid: string): FakeWhatsAppSent[];
  readonly presences: Array<{ jid: string; state: string }>;
  holdSend(when: (body: { jid: string; what: { kind: string; text?: string } }) => boolean): Promise<void>;
  /** The next send `when` accepts is delivered, but never answered (the device dies before the answer). */
  holdAnswer(when: (body: { jid: string; what: { kind: string; text?: string } }) => boolean): Promise<void>;
  /** The connection breaks and new ones are refused until `restore`. */
  drop(): void;
  restore(): void;
  /** WhatsApp logs the device out (removed on the phone). */
  logout(): void;
  close(): Promise<void>;
}

export const personJid = (number: string) => `${number.replace(/^\+/, "")}@s.whatsapp.net`;

export async function startFakeWhatsApp(): Promise<FakeWhatsApp> {
  const queue: string[] = [];
  const sent: FakeWhatsAppSent[] = [];
  const media = new Map<string, Uint8Array>();
  const presences: FakeWhatsApp["presences"] = [];
  const pairingAsked: string[] = [];
  const holds: Array<{ when: Parameters<FakeWhatsApp["holdSend"]>[0]; deliver: boolean; arrived: () => void }> = [];
  const sockets = new Set<Socket>();
  let stream: ServerResponse | null = null;
  let waitingLink: ServerResponse | null = null;
  let linkedTo: string | null = null;
  let refused = false;
  let connectsOpened = 0;
  let ids = 0;

  const write = (res: ServerResponse, e: unknown) => res.write(`${JSON.stringify(e)}\n`);
  const open = (res: ServerResponse, me: string) => {
    stream = res;
    write(res, { type: "open", me: { number: me } });
    while (queue.length > 0 && stream === res) res.write(queue.shift()!);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/connect") {
      if (refused) return void res.writeHead(503).end();
      connectsOpened++;
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.flushHeaders();
      res.on("close", () => {
        if (stream === res) stream = null;
        if (waitingLink === res) waitingLink = null;
      });
      const linked = url.searchParams.get("linked");
      if (linked && linked === linkedTo) return open(res, linked);
      if (linked) return void res.end(`${JSON.stringify({ type: "close", reason: "logged_out", detail: "401: logged out" })}\n`);
      const number = url.searchParams.get("pairingNumber");
      pairingAsked.push(number ?? "qr");
      write(res, number ? { type: "pairing", how: "code", code: "ABCD1234" } : { type: "pairing", how: "qr", qr: "2@fake-qr,fake-key" });
      waitingLink = res;
      return;
    }
    if (url.pathname.startsWith("/media/")) {
      const bytes = media.get(url.pathname.slice(7));
      return void (bytes ? res.writeHead(200).end(Buffer.from(bytes)) : res.writeHead(404).end());
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      if (url.pathname === "/presence") {
        presences.push(body);
        return void res.writeHead(200, { "content-type": "application/json" }).end("{}");
      }
      if (url.pathname !== "/send") return void res.writeHead(404).end();
      if (!stream) return void res.writeHead(503).end();
      const at = holds.findIndex((h) => h.when(body));
      const hold = at >= 0 ? holds.splice(at, 1)[0] : undefined;
      if (hold && !hold.deliver) return void hold.arrived();
      // A message sent again with the id it had is the same message to the recipient (their
      // client keeps one message per id), as WhatsApp does.
      if (body.id && sent.some((m) => m.jid === body.jid && m.id === body.id)) return void (hold ? hold.arrived() : res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: body.id })));
      const id = body.id ?? `BOT${++ids}`;
      const w = body.what;
      sent.push({
        id,
        jid: body.jid,
        text: w.kind === "text" ? w.text : (w.caption ?? ""),
        ...(w.kind === "file" ? { file: { name: w.name, mime: w.mime, bytes: new Uint8Array(Buffer.from(w.data, "base64")), voice: w.voice, asPhoto: w.asPhoto } } : {}),
        quote: body.quote ? { id: body.quote.id, sender: body.quote.sender } : null,
      });
      if (hold) return void hold.arrived(); // delivered, never answered
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id }));
    });
  };

  const server = createServer(handle);
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    env: () => ({ HEARTH_WHATSAPP_SOCKET: fileURLToPath(new URL("./fake-whatsapp-socket.ts", import.meta.url)), FAKE_WHATSAPP_URL: url }),
    get connectsOpened() {
      return connectsOpened;
    },
    connected: () => stream !== null,
    waitingForLink: () => waitingLink !== null,
    pairingAsked,
    link(number = WA_BOT) {
      const res = waitingLink;
      if (!res) throw new Error("no device is waiting to be linked");
      waitingLink = null;
      linkedTo = number;
      write(res, { type: "linked", me: number });
      open(res, number);
    },
    receive(m) {
      const id = `MSG${++ids}`;
      let fileId: string | undefined;
      if (m.media) media.set((fileId = `f${ids}`), m.media.bytes);
      const message = {
        id,
        chatJid: m.group ?? personJid(m.from.number),
        sender: m.from.number.replace(/^\+/, ""),
        senderName: m.from.name,
        fromMe: m.fromMe === true,
        timestamp: Date.now(),
        text: m.text ?? "",
        mentioned: m.mentionsBot ? [linkedTo ?? WA_BOT] : [],
        ...(m.quote ? { quoted: m.quote } : {}),
        ...(m.media ? { media: { kind: m.media.kind, mime: m.media.mime, ...(m.media.fileName ? { fileName: m.media.fileName } : {}), size: m.media.bytes.byteLength, voice: m.media.voice === true, fileId } } : {}),
      };
      const line = `${JSON.stringify({ type: "message", message })}\n`;
      if (stream) stream.write(line);
      else queue.push(line);
      return id;
    },
    messages: (jid) => sent.filter((s) => s.jid === jid),
    presences,
    async holdSend(when) {
      await new Promise<void>((arrived) => holds.push({ when, deliver: false, arrived }));
    },
    async holdAnswer(when) {
      await new Promise<void>((arrived) => holds.push({ when, deliver: true, arrived }));
    },
    drop() {
      refused = true;
      stream?.destroy();
      stream = null;
    },
    restore() {
      refused = false;
    },
    logout() {
      linkedTo = null;
      if (stream) stream.end(`${JSON.stringify({ type: "close", reason: "logged_out", detail: "401: Connection Failure" })}\n`);
      stream = null;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits until the daemon's connection is open (a new one, when `after` connections were opened before). */
export function whatsappConnected(wa: FakeWhatsApp, after: number): Promise<void> {
  return waitFor("the WhatsApp connection to be open", () => wa.connectsOpened > after && wa.connected());
}
