// The Matrix channel on matrix-js-sdk: one sync loop for messages (the SDK's, with its own
// backoff and reconnection), the client-server API for replies. Access, pairing, sessions and
// commands are the gateway's; this file connects, keeps the connection's state visible
// (`hearth status`, with the encryption and the device's trust), accepts or declines invites,
// turns room events into InboundMessages (inbound.ts) and streams replies by edits (reply.ts).
// The sync position is kept only after the inbox has a sync's messages (sync-store.ts).
import { createHash } from "node:crypto";
import path from "node:path";
import { ClientEvent, createClient, HttpApiEvent, MatrixError, RoomEvent, SyncState, type MatrixClient, type MatrixEvent, type Room } from "matrix-js-sdk";
import type { Logger } from "../../process/log.ts";
import { fetchBounded } from "../../media/download.ts";
import type { Attachment, Channel, ChannelStatus, ChoiceHandler, ChoiceQuestion, DeliveryTarget, InboundMessage, OutboundFile, ReplyJournal, ReplySink } from "../channel.ts";
import { isDeliveryTarget } from "../channel.ts";
import { printable } from "../printable.ts";
import type { ChannelDeps } from "../descriptor.ts";
import { StreamingReply, type StreamingReplyOptions } from "../streaming-reply.ts";
import { decryptAttachment, encryptAttachment } from "./attachments.ts";
import type { MatrixConfig } from "./config.ts";
import { normalizeEvent, type MatrixFile, type MatrixReplyRef } from "./inbound.ts";
import { matrixTransport, type MatrixReplyTarget, type MatrixSender } from "./reply.ts";
import { FileSyncStore } from "./sync-store.ts";
import { whoami } from "./setup.ts";
import { cryptoSummary, quietLogger, startCrypto } from "./crypto.ts";
import { CRYPTO_STORE_FILE, CryptoStoreFile } from "./crypto-store.ts";
import { pickedChoice, QUESTION_FIELD, questionContent } from "./choices.ts";
import { messageContent } from "./reply.ts";

const MAX_MESSAGE = 16_000;
const EDIT_INTERVAL_MS = 1000;
const TYPING_INTERVAL_MS = 5000;
const CONNECT_TIMEOUT_MS = 30_000;
/** Rate-limited requests are retried this often, each after the homeserver's Retry-After. */
const RATE_LIMIT_RETRIES = 5;

/** The channel could not connect; `retryable` when the homeserver was out of reach. */
export class MatrixConnectError extends Error {
  override name = "MatrixConnectError";
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

export function createMatrixChannel(config: MatrixConfig, deps: Pick<ChannelDeps, "log" | "home">): Channel {
  return new MatrixChannel(config, deps);
}

class MatrixChannel implements Channel {
  readonly id = "matrix" as const;
  readonly #config: MatrixConfig;
  readonly #log: Logger;
  readonly #home: string;
  readonly #token: string | undefined;
  readonly #namePattern: RegExp | null;
  #client: MatrixClient | null = null;
  #me = { userId: "", deviceId: "", name: "" };
  #status: ChannelStatus = { state: "stopped" };
  /** Rooms known to be direct chats with the bot (m.direct, or a direct invite it accepted). */
  readonly #direct = new Set<string>();
  #encryption = "off";
  #cryptoStore: CryptoStoreFile | null = null;
  #onChoice: ChoiceHandler | undefined;
  /** The bot's own reactions under each open question, taken off when it is settled. */
  readonly #reactions = new Map<string, string[]>();

  constructor(config: MatrixConfig, deps: Pick<ChannelDeps, "log" | "home">) {
    this.#config = config;
    this.#log = deps.log;
    this.#home = deps.home;
    this.#token = config.accessToken ?? (process.env.MATRIX_ACCESS_TOKEN?.trim() || undefined);
    this.#namePattern = config.namePattern === null ? null : new RegExp(config.namePattern, "i");
  }

  status(): ChannelStatus {
    return this.#status;
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────

  async start(onMessage: (m: InboundMessage) => void | Promise<void>): Promise<void> {
    if (this.#client) throw new Error("The Matrix channel is already started; stop() it before starting it again.");
    if (!this.#token) throw this.#fail(new MatrixConnectError("no access token: set MATRIX_ACCESS_TOKEN or channels.matrix.accessToken", false));
    this.#setStatus({ state: "starting" });
    const who = await whoami(this.#token, this.#config.homeserverUrl);
    if (!who.ok) throw this.#fail(new MatrixConnectError(who.problem, who.retryable === true));
    if (this.#config.userId && who.userId !== this.#config.userId) throw this.#fail(new MatrixConnectError(`the access token belongs to ${who.userId}, not to channels.matrix.userId ${this.#config.userId}; fix one of them`, false));
    const dir = path.join(this.#home, "matrix");
    const store = new FileSyncStore(path.join(dir, "sync.json"), this.#log);
    const client = createClient({
      baseUrl: this.#config.homeserverUrl,
      accessToken: this.#token,
      userId: who.userId,
      deviceId: who.deviceId ?? "HEARTH",
      store,
      logger: quietLogger(this.#log),
      useAuthorizationHeader: true,
      // The owner verifies the bot's device by emoji (verification.ts); a bot scans no QR codes.
      verificationMethods: ["m.sas.v1"],
    });
    this.#client = client;
    this.#me = { userId: who.userId, deviceId: who.deviceId ?? "HEARTH", name: who.userId.slice(1).split(":")[0]! };
    if (this.#config.encryption) this.#encryption = await this.#startCrypto(client, store);
    const resumes = store.resumes;
    let prepared = false;
    client.on(RoomEvent.Timeline, (event, room, toStart, _removed, data) => {
      if (toStart || !room || !data.liveEvent) return;
      // A first start reads the account's history, not news: only what arrives after it counts.
      if (!prepared && !resumes) return;
      store.hold(this.#receive(client, event, room, onMessage));
    });
    client.on(RoomEvent.MyMembership, (room, membership) => {
      if (membership === "invite") void this.#answerInvite(client, room);
    });
    client.on(ClientEvent.AccountData, (event) => {
      if (event.getType() === "m.direct") this.#readDirect(event.getContent());
    });
    client.on(HttpApiEvent.SessionLoggedOut, () => this.#setStatus({ state: "failed", reason: "the homeserver logged the bot out (its access token is no longer valid): log it in again and set the new MATRIX_ACCESS_TOKEN" }));
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new MatrixConnectError(`the homeserver at ${new URL(this.#config.homeserverUrl).host} did not sync within ${CONNECT_TIMEOUT_MS / 1000} s`, true)), CONNECT_TIMEOUT_MS);
      client.on(ClientEvent.Sync, (state, _prev, data) => {
        if (this.#client !== client) return;
        if (state === SyncState.Prepared) {
          prepared = true;
          clearTimeout(timer);
          resolve();
        }
        if (state === SyncState.Syncing || state === SyncState.Prepared) this.#setStatus({ state: "running", detail: this.#describe(client) });
        else if (state === SyncState.Error || state === SyncState.Reconnecting) this.#setStatus({ state: "reconnecting", detail: `lost the connection to the homeserver (${data?.error?.message ?? "sync failed"}); reconnecting` });
      });
    });
    try {
      await client.startClient({ initialSyncLimit: 20, lazyLoadMembers: false });
      await ready;
    } catch (err) {
      await this.stop();
      throw this.#fail(err instanceof MatrixConnectError ? err : new MatrixConnectError(`could not sync with ${this.#config.homeserverUrl}: ${(err as Error).message}`, true));
    }
    this.#readDirect(client.getAccountData("m.direct" as never)?.getContent() ?? {});
    this.#log.info("matrix.connected", { userId: who.userId, deviceId: this.#me.deviceId, encryption: this.#encryption });
  }

  async stop(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    if (!client) return;
    client.removeAllListeners();
    client.stopClient();
    const crypto = this.#cryptoStore;
    this.#cryptoStore = null;
    await crypto?.close();
    this.#setStatus({ state: "stopped" });
  }

  /** The crypto on the store kept in the home; off, with the reason, when that store cannot be read (new keys would orphan the device's). */
  async #startCrypto(client: MatrixClient, syncStore: FileSyncStore): Promise<string> {
    const file = path.join(this.#home, CRYPTO_STORE_FILE);
    try {
      this.#cryptoStore = await CryptoStoreFile.open(file, this.#log);
    } catch (error) {
      this.#log.error("matrix.crypto_store_unreadable", { file, error });
      return `off (the crypto store ${CRYPTO_STORE_FILE} in the home could not be read: ${(error as Error).message}; move it away to start with new keys, then verify the bot again)`;
    }
    syncStore.beforeSave = () => this.#cryptoStore?.flush() ?? Promise.resolve();
    const changed = () => {
      if (this.#client === client && this.#status.state === "running") this.#setStatus({ state: "running", detail: this.#describe(client) });
    };
    return startCrypto(client, this.#cryptoStore, this.#config.ownerIds, this.#log, changed);
  }

  #setStatus(next: ChannelStatus): void {
    const prev = this.#status;
    this.#status = next;
    if (prev.state !== next.state) this.#log.info("matrix.state", { ...next });
  }

  #fail(error: MatrixConnectError): MatrixConnectError {
    this.#setStatus({ state: "failed", reason: error.message });
    return error;
  }

  #describe(client: MatrixClient): string {
    const rooms = client.getRooms().filter((r) => r.getMyMembership() === "join").length;
    return `as ${this.#me.userId} · ${rooms} room${rooms === 1 ? "" : "s"} · ${cryptoSummary(client, this.#encryption)}`;
  }

  // ── invites and rooms ─────────────────────────────────────────────────────────────────────

  /** The owner's invites are accepted; a direct chat when others may write privately; a listed room; others declined. */
  async #answerInvite(client: MatrixClient, room: Room): Promise<void> {
    const invite = room.getMember(this.#me.userId)?.events.member;
    const inviter = invite?.getSender() ?? "";
    const direct = invite?.getContent().is_direct === true;
    const c = this.#config;
    const owner = c.ownerIds.includes(inviter);
    const accept = owner || c.rooms.allow.includes(room.roomId) || (direct && (c.dmPolicy === "pairing" || (c.dmPolicy === "allowlist" && c.allowFrom.includes(inviter)))) || (!direct && c.rooms.policy === "open");
    try {
      if (!accept) {
        this.#log.info("matrix.invite_declined", { room: room.roomId, inviter });
        await this.#retry(() => client.leave(room.roomId));
        return;
      }
      await this.#retry(() => client.joinRoom(room.roomId));
      this.#log.info("matrix.invite_accepted", { room: room.roomId, inviter, direct });
      if (direct) {
        this.#direct.add(room.roomId);
        const current = (client.getAccountData("m.direct" as never)?.getContent() ?? {}) as Record<string, string[]>;
        const rooms = [...new Set([...(current[inviter] ?? []), room.roomId])];
        await this.#retry(() => client.setAccountData("m.direct" as never, { ...current, [inviter]: rooms } as never));
      }
    } catch (error) {
      this.#log.warn("matrix.invite_failed", { room: room.roomId, error });
    }
  }

  #readDirect(content: Record<string, unknown>): void {
    for (const rooms of Object.values(content)) if (Array.isArray(rooms)) for (const r of rooms) if (typeof r === "string") this.#direct.add(r);
  }

  /** A listed room is a group; a room in m.direct is a direct chat; otherwise one with only the bot and one person is. */
  #isDirect(room: Room): boolean {
    if (this.#config.rooms.allow.includes(room.roomId)) return false;
    if (this.#direct.has(room.roomId)) return true;
    return room.getInvitedAndJoinedMemberCount() <= 2;
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  async #receive(client: MatrixClient, event: MatrixEvent, room: Room, onMessage: (m: InboundMessage) => void | Promise<void>): Promise<void> {
    // Who is in the room as the event arrives, read before anything is awaited: the room's state
    // moves on with the sync while the event is decrypted.
    const direct = this.#isDirect(room);
    const members = membersOf(room, this.#me.userId);
    try {
      if (event.getSender() === this.#me.userId) return;
      if (event.isEncrypted()) await client.decryptEventIfNeeded(event);
      if (event.isDecryptionFailure()) {
        this.#log.warn("matrix.undecryptable", { room: room.roomId, event: event.getId(), reason: event.decryptionFailureReason });
        return;
      }
      // A press is no inbox message: the sync position need not wait for its handler.
      if (event.getType() === "m.reaction") {
        void this.#react(client, event, room).catch((error: unknown) => this.#log.warn("matrix.press_failed", { event: event.getId(), error }));
        return;
      }
      const replyTo = (event.getContent()["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]?.event_id;
      const sender = event.getSender() ?? "";
      const result = normalizeEvent(
        {
          eventId: event.getId() ?? "",
          roomId: room.roomId,
          roomName: room.name,
          sender,
          senderName: room.getMember(sender)?.name ?? sender,
          type: event.getType(),
          content: event.getContent(),
          ts: event.getTs(),
          direct,
          members,
          repliedToSender: replyTo ? room.findEventById(replyTo)?.getSender() : undefined,
        },
        { bot: { userId: this.#me.userId, name: room.getMember(this.#me.userId)?.name ?? this.#me.name }, ownerIds: this.#config.ownerIds, namePattern: this.#namePattern },
      );
      if (result.kind === "ignored") {
        this.#log.debug("matrix.ignored", { event: event.getId(), reason: result.reason });
        return;
      }
      const attachments = result.file ? [this.#attachment(result.file)] : [];
      await onMessage(attachments.length > 0 ? { ...result.message, attachments } : result.message);
    } catch (error) {
      this.#log.error("matrix.inbound_failed", { event: event.getId(), error });
    }
  }

  /** A file of a message, downloaded from the homeserver's authenticated media endpoint (decrypted when it came encrypted). */
  #attachment(f: MatrixFile): Attachment {
    return {
      kind: f.kind,
      name: f.name,
      mime: f.mime,
      ...(f.size !== undefined ? { size: f.size } : {}),
      ...(f.durationSeconds !== undefined ? { durationSeconds: f.durationSeconds } : {}),
      fetch: async (maxBytes, signal) => {
        const mxc = f.file?.url ?? f.url;
        const parts = mxc ? /^mxc:\/\/([^/]+)\/([^/?#]+)$/.exec(mxc) : null;
        if (!parts) throw new Error("the message's file has no mxc:// address");
        const url = `${this.#config.homeserverUrl.replace(/\/+$/, "")}/_matrix/client/v1/media/download/${encodeURIComponent(parts[1]!)}/${encodeURIComponent(parts[2]!)}`;
        const bytes = await fetchBounded(url, maxBytes, signal, { headers: { Authorization: `Bearer ${this.#token}` } });
        return f.file ? decryptAttachment(bytes, f.file) : bytes;
      },
    };
  }

  /** A reaction under a question is a press: the handler decides whose counts; anyone else is told in the room. */
  async #react(client: MatrixClient, event: MatrixEvent, room: Room): Promise<void> {
    const rel = event.getContent()["m.relates_to"] as { rel_type?: string; event_id?: string; key?: string } | undefined;
    if (rel?.rel_type !== "m.annotation" || !rel.event_id || !rel.key || !this.#onChoice) return;
    const target = room.findEventById(rel.event_id) ?? (await client.fetchRoomEvent(room.roomId, rel.event_id).then((raw) => ({ getContent: () => raw.content as Record<string, any>, getSender: () => raw.sender }), () => undefined));
    if (!target || target.getSender() !== this.#me.userId) return;
    const picked = pickedChoice(target.getContent(), rel.key);
    if (!picked) return;
    const sender = event.getSender() ?? "";
    const isOwner = this.#config.ownerIds.includes(sender);
    const answer = await this.#onChoice({ ...picked, by: { id: sender, name: printable(room.getMember(sender)?.name ?? sender), isOwner }, channel: "matrix" });
    if (!isOwner && answer) {
      const txn = `press-${event.getId()}`;
      await this.#sender().sendEvent(room.roomId, "m.room.message", { msgtype: "m.notice", body: answer, "m.mentions": { user_ids: [sender] }, "m.relates_to": { "m.in_reply_to": { event_id: rel.event_id } } }, txn);
    }
  }

  onChoice(handler: ChoiceHandler): void {
    this.#onChoice = handler;
  }

  async askChoices(to: DeliveryTarget, question: ChoiceQuestion): Promise<string> {
    const sender = this.#sender();
    const target = replyTarget(to);
    const content = questionContent(question);
    const id = await sender.sendEvent(target.roomId, "m.room.message", content, `ask-${question.key}-${Date.now().toString(36)}`);
    const reactions: string[] = [];
    for (const emoji of Object.keys((content[QUESTION_FIELD] as { choices: Record<string, string> }).choices)) {
      reactions.push(await sender.sendEvent(target.roomId, "m.reaction", { "m.relates_to": { rel_type: "m.annotation", event_id: id, key: emoji } }, `react-${id}-${emoji}`));
    }
    this.#reactions.set(id, reactions);
    return id;
  }

  /** The question now shows `text` and no choices; the bot's reactions under it are taken off. */
  async settleChoices(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    const sender = this.#sender();
    const roomId = replyTarget(to).roomId;
    const content = messageContent(text, true);
    await sender.sendEvent(roomId, "m.room.message", { ...content, body: `* ${text}`, "m.new_content": content, "m.relates_to": { rel_type: "m.replace", event_id: messageId } }, `settle-${messageId}`);
    for (const r of this.#reactions.get(messageId) ?? []) await sender.redact(roomId, r, `unreact-${r}`).catch(() => {});
    this.#reactions.delete(messageId);
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /** Retries a request the homeserver rate-limited, after its Retry-After (or retry_after_ms). */
  async #retry<T>(request: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await request();
      } catch (err) {
        if (!(err instanceof MatrixError) || !err.isRateLimitError() || attempt >= RATE_LIMIT_RETRIES) throw err;
        let wait = 1000;
        try {
          wait = err.getRetryAfterMs() ?? 1000;
        } catch {
          // an unreadable Retry-After: a second
        }
        this.#log.info("matrix.rate_limited", { retryAfterMs: wait });
        await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(wait, 0), 60_000)));
      }
    }
  }

  readonly #sender = (): MatrixSender => {
    const client = this.#client;
    if (!client) throw new Error("the Matrix channel is not running");
    return {
      sendEvent: async (roomId, type, content, txnId) => {
        const id = (await this.#retry(() => client.sendEvent(roomId, type as never, content as never, txnId))).event_id;
        // Sent only once the ratchet that encrypted it is on disk: a crash then never reuses it.
        await this.#cryptoStore?.flush();
        return id;
      },
      redact: async (roomId, eventId, txnId) => void (await this.#retry(() => client.redactEvent(roomId, eventId, txnId))),
      typing: async (roomId) => void (await client.sendTyping(roomId, true, TYPING_INTERVAL_MS + 1000)),
    };
  };

  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    const target = replyTarget(to);
    if (journal?.messageIds[0] !== undefined) delete target.replyTo;
    const transport = matrixTransport(this.#sender, target, { typing: true, ...(journal ? { txnSeed: journal.key } : {}) });
    return new StreamingReply(transport, { ...this.#replyOptions(), ...(journal ? { journal } : {}) });
  }

  async send(to: DeliveryTarget, text: string): Promise<void> {
    this.#sender();
    await new StreamingReply(matrixTransport(this.#sender, replyTarget(to), { typing: false }), this.#replyOptions()).finish(text);
  }

  async showActivity(to: InboundMessage | DeliveryTarget): Promise<void> {
    await this.#sender().typing(replyTarget(to).roomId);
  }

  /** Uploads the file (encrypted first in an encrypted room) and posts it as an image or a file. */
  async sendFile(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string> {
    const client = this.#client;
    if (!client) throw new Error("the Matrix channel is not running");
    const target = replyTarget(to);
    const encrypted = (await client.getCrypto()?.isEncryptionEnabledInRoom(target.roomId)) === true;
    const sealed = encrypted ? encryptAttachment(file.data) : null;
    const upload = await this.#retry(() => client.uploadContent(Buffer.from(sealed?.data ?? file.data), { name: encrypted ? "encrypted" : file.name, type: encrypted ? "application/octet-stream" : file.mime }));
    const where = sealed ? { file: { ...sealed.info, url: upload.content_uri } } : { url: upload.content_uri };
    const content = {
      msgtype: file.asPhoto ? "m.image" : file.voice ? "m.audio" : "m.file",
      body: file.caption ?? file.name,
      filename: file.name,
      info: { mimetype: file.mime, size: file.data.byteLength },
      ...where,
      ...(target.threadId ? { "m.relates_to": { rel_type: "m.thread", event_id: target.threadId, is_falling_back: true, "m.in_reply_to": { event_id: target.replyTo ?? target.threadId } } } : {}),
    };
    // Derived from where it goes and what it is: an upload retried after a lost response (or a
    // replay after a crash) is answered with the event already made, not posted twice.
    const txn = createHash("sha256").update(`file\0${target.roomId}\0${target.replyTo ?? ""}\0${file.name}\0${file.caption ?? ""}\0`).update(file.data).digest("base64url").slice(0, 32);
    return this.#sender().sendEvent(target.roomId, "m.room.message", content, txn);
  }

  #replyOptions(): StreamingReplyOptions {
    return { maxLength: MAX_MESSAGE, editIntervalMs: EDIT_INTERVAL_MS, typingIntervalMs: TYPING_INTERVAL_MS, reopenCodeBlocks: true, log: this.#log };
  }
}

function replyTarget(to: InboundMessage | DeliveryTarget): MatrixReplyTarget {
  if (isDeliveryTarget(to)) return { roomId: to.chatId, ...(to.threadId ? { threadId: to.threadId } : {}) };
  const raw = to.raw as Partial<MatrixReplyRef> | undefined;
  const roomId = typeof raw?.roomId === "string" ? raw.roomId : to.chat.id;
  const threadId = typeof raw?.threadId === "string" ? raw.threadId : to.chat.threadId;
  return { roomId, replyTo: typeof raw?.eventId === "string" ? raw.eventId : to.id, ...(threadId ? { threadId } : {}) };
}

/**
 * The room's joined and invited members but the bot (the room state, complete: members are not
 * lazy-loaded); "unknown" past 100, where nobody needs the list (a large room is a group).
 */
function membersOf(room: Room, bot: string): string[] | "unknown" {
  if (room.getInvitedAndJoinedMemberCount() > 101) return "unknown";
  const ids: string[] = [];
  for (const m of room.getMembers()) {
    if (m.userId === bot || (m.membership !== "join" && m.membership !== "invite")) continue;
    ids.push(m.userId);
    if (ids.length === 100) break;
  }
  return ids;
}
