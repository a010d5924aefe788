// The WhatsAppConnector (socket.ts) on @whiskeysockets/baileys: the only file that knows the
// library. It maps Baileys' events and messages to Hearth's terms and back, and keeps the link's
// secrets in Hearth's store (auth-store.ts). Loaded only when the channel runs, from the home's
// packages (channels/packages.ts). Everything here is the library's edge: the tests' fake
// replaces this file at the interface, so what is decided (who, what, when) is decided above it.
import type { Readable } from "node:stream";
import {
  Browsers,
  DisconnectReason,
  downloadMediaMessage,
  initAuthCreds,
  jidNormalizedUser,
  makeWASocket,
  normalizeMessageContent,
  proto,
  type AnyMessageContent,
  type AuthenticationCreds,
  type SignalDataSet,
  type SignalDataTypeMap,
  type WAMessage,
} from "@whiskeysockets/baileys";
import type { WhatsAppConnector, WhatsAppEvent, WhatsAppMessage, WhatsAppOutgoing } from "./socket.ts";

/** Baileys logs through pino by default; Hearth's own log says what matters, so the library is quiet. */
type Logger = NonNullable<Parameters<typeof makeWASocket>[0]["logger"]>;
const quiet: Logger = { level: "silent", child: () => quiet, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

export const connectBaileys: WhatsAppConnector = async ({ store, on, pairingNumber }) => {
  const saved = store.readCreds() as AuthenticationCreds | null;
  const creds = saved ?? initAuthCreds();
  if (!saved) store.writeCreds(creds);
  let ended = false;
  const emit = (e: WhatsAppEvent) => {
    if (!ended) on(e);
  };
  const sock = makeWASocket({
    auth: {
      creds,
      keys: {
        get: <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const found = store.readKeys(type, ids) as Record<string, SignalDataTypeMap[T]>;
          // Baileys expects these as protobuf objects, not the plain JSON they were stored as.
          if (type === "app-state-sync-key") for (const id of Object.keys(found)) found[id] = proto.Message.AppStateSyncKeyData.fromObject(found[id] as object) as unknown as SignalDataTypeMap[T];
          return found;
        },
        set: (data: SignalDataSet) => store.writeKeys(data as Record<string, Record<string, unknown | null>>),
      },
    },
    logger: quiet,
    browser: Browsers.ubuntu("Hearth"),
    markOnlineOnConnect: false,
    syncFullHistory: false,
    shouldSyncHistoryMessage: () => false,
  });
  let codeAsked = false;
  sock.ev.on("creds.update", () => store.writeCreds(creds));
  sock.ev.on("connection.update", (u) => {
    if (u.qr) {
      if (pairingNumber && !creds.registered) {
        if (!codeAsked) {
          codeAsked = true;
          void sock.requestPairingCode(pairingNumber).then(
            (code) => emit({ type: "pairing", how: "code", code }),
            () => emit({ type: "pairing", how: "qr", qr: u.qr! }),
          );
        }
      } else emit({ type: "pairing", how: "qr", qr: u.qr });
    }
    if (u.connection === "open") {
      const me = sock.user?.id ? jidNormalizedUser(sock.user.id).split("@")[0]! : "";
      emit({ type: "open", me: { number: me, ...(sock.user?.name ? { name: sock.user.name } : {}) } });
    }
    if (u.connection === "close") {
      const error = u.lastDisconnect?.error as (Error & { output?: { statusCode?: number } }) | undefined;
      const status = error?.output?.statusCode;
      const reason = status === DisconnectReason.loggedOut ? "logged_out" : status === DisconnectReason.connectionReplaced ? "replaced" : status === DisconnectReason.restartRequired ? "restart" : "lost";
      emit({ type: "close", reason, detail: `${status ?? "no status"}: ${error?.message ?? "closed"}` });
      ended = true;
    }
  });
  sock.ev.on("messages.upsert", ({ messages, type }) => {
    for (const msg of messages) {
      // "append" brings history and the account's own messages from its other devices: only the latter.
      if (type !== "notify" && !msg.key.fromMe) continue;
      const m = toHearth(msg, { number: sock.user?.id ? jidNormalizedUser(sock.user.id).split("@")[0]! : "", lid: sock.user?.lid ?? null });
      if (m) emit({ type: "message", message: m });
    }
  });

  return {
    async send(jid, what, quote, id) {
      const quoted = quote ? { quoted: { key: { remoteJid: jid, id: quote.id, fromMe: quote.fromMe, ...(jid.endsWith("@g.us") ? { participant: `${quote.sender}@s.whatsapp.net` } : {}) }, message: { conversation: "" } } } : {};
      const sent = await sock.sendMessage(jid, content(what), { ...quoted, ...(id ? { messageId: id } : {}) });
      return sent?.key.id ?? "";
    },
    async presence(jid, state) {
      await sock.sendPresenceUpdate(state, jid);
    },
    end() {
      if (ended) return;
      ended = true;
      void sock.end(undefined).catch(() => undefined);
    },
  };
};

function content(what: WhatsAppOutgoing): AnyMessageContent {
  if (what.kind === "text") return { text: what.text };
  const data = Buffer.from(what.data.buffer, what.data.byteOffset, what.data.byteLength);
  const caption = what.caption ? { caption: what.caption } : {};
  // WhatsApp plays a voice note only as OGG/Opus; a spoken answer in another format goes as audio.
  if (what.voice && /ogg|opus/i.test(what.mime)) return { audio: data, ptt: true, mimetype: "audio/ogg; codecs=opus" };
  if (what.asPhoto) return { image: data, mimetype: what.mime, ...caption };
  if (what.mime.startsWith("audio/")) return { audio: data, mimetype: what.mime };
  return { document: data, mimetype: what.mime || "application/octet-stream", fileName: what.name, ...caption };
}

const digits = (jid: string | null | undefined): string | undefined => (jid && jid.endsWith("@s.whatsapp.net") ? jidNormalizedUser(jid).split("@")[0] : undefined);

/** A Baileys message in Hearth's terms; null for protocol messages (receipts, key distribution, edits). */
function toHearth(msg: WAMessage, own: { number: string; lid: string | null }): WhatsAppMessage | null {
  const key = msg.key;
  const m = normalizeMessageContent(msg.message);
  if (!m || !key.remoteJid || !key.id) return null;
  if (m.protocolMessage || m.senderKeyDistributionMessage && Object.keys(m).length === 1 || m.reactionMessage) return null;
  // Baileys 7 may name people by LID; the phone-number form, when WhatsApp gives it, is the "alt".
  const chatJid = key.remoteJid.endsWith("@lid") && key.remoteJidAlt ? key.remoteJidAlt : key.remoteJid;
  const author = key.participantAlt ?? key.participant ?? key.remoteJidAlt ?? key.remoteJid;
  const ctx = m.extendedTextMessage?.contextInfo ?? m.imageMessage?.contextInfo ?? m.documentMessage?.contextInfo ?? m.audioMessage?.contextInfo ?? m.videoMessage?.contextInfo ?? undefined;
  const text = m.conversation ?? m.extendedTextMessage?.text ?? m.imageMessage?.caption ?? m.documentMessage?.caption ?? m.videoMessage?.caption ?? "";
  const mentioned = (ctx?.mentionedJid ?? []).map((j) => (own.lid && jidNormalizedUser(j) === jidNormalizedUser(own.lid) ? own.number : (digits(j) ?? j)));
  const out: WhatsAppMessage = {
    id: key.id,
    chatJid,
    sender: digits(author) ?? author,
    senderName: msg.pushName ?? "",
    fromMe: key.fromMe === true,
    timestamp: Number(msg.messageTimestamp ?? 0) * 1000 || Date.now(),
    text,
    mentioned,
  };
  if (ctx?.stanzaId) {
    const q = ctx.quotedMessage;
    const quotedText = q?.conversation ?? q?.extendedTextMessage?.text ?? undefined;
    out.quoted = { id: ctx.stanzaId, ...(ctx.participant ? { sender: digits(ctx.participant) ?? ctx.participant } : {}), ...(quotedText ? { text: quotedText } : {}) };
  }
  const media = m.imageMessage ?? m.documentMessage ?? m.audioMessage ?? m.videoMessage;
  if (media) {
    const kind = m.imageMessage ? "image" : m.documentMessage ? "document" : m.audioMessage ? "audio" : "video";
    const size = Number(media.fileLength ?? Number.NaN);
    const seconds = "seconds" in media ? Number(media.seconds ?? Number.NaN) : Number.NaN;
    out.media = {
      kind,
      mime: media.mimetype ?? "",
      ...(m.documentMessage?.fileName ? { fileName: m.documentMessage.fileName } : {}),
      ...(Number.isFinite(size) ? { size } : {}),
      ...(Number.isFinite(seconds) ? { seconds } : {}),
      voice: m.audioMessage?.ptt === true,
      download: (maxBytes, signal) => readBounded(downloadMediaMessage(msg, "stream", {}) as Promise<Readable>, maxBytes, signal),
    };
  } else if (m.stickerMessage) out.unsupported = "sticker";
  else if (m.locationMessage || m.liveLocationMessage) out.unsupported = "location";
  else if (m.contactMessage || m.contactsArrayMessage) out.unsupported = "contact";
  else if (m.pollCreationMessage || m.pollCreationMessageV2 || m.pollCreationMessageV3) out.unsupported = "poll";
  else if (!text) out.unsupported = "other";
  return out;
}

async function readBounded(opening: Promise<Readable>, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  const stream = await opening;
  const chunks: Buffer[] = [];
  let total = 0;
  const onAbort = () => stream.destroy(new Error("the download was cancelled"));
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        stream.destroy();
        throw Object.assign(new Error(`the file is larger than ${maxBytes} bytes`), { tooLarge: true });
      }
      chunks.push(chunk);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  return Buffer.concat(chunks);
}
