/**
 * A fake Discord on 127.0.0.1 for tests: the REST routes a bot uses (under `/api/v10`) and a
 * gateway WebSocket (HELLO, heartbeat ACK, IDENTIFY → READY + GUILD_CREATE, RESUME with replay,
 * dispatches). discord.js talks to it with `rest: { api: fake.apiBase }` and learns the gateway
 * URL from `GET /gateway/bot`, as it does with the real Discord.
 *
 * It models what tests rely on: a world of users, guilds, text channels, threads and DM
 * channels; messages with mentions parsed from their content (`<@id>`, `<@&role>`, `@everyone`),
 * replies (`message_reference` + `referenced_message`), intents (no MESSAGE_CONTENT → empty
 * content unless the bot is mentioned or it is a DM), 2,000-character limits, `enforce_nonce`
 * dedupe, who a bot message would ping under its `allowed_mentions`, and the bot's own messages
 * echoed back as MESSAGE_CREATE / MESSAGE_UPDATE like the real gateway does, and slash commands:
 * the application's global commands (bulk overwrite), INTERACTION_CREATE for a command a user
 * uses, its callback (once) and the edits of its original response, authorised by the
 * interaction's token in the path as on Discord. Every REST call is recorded. A token other than `fake.token` gets REST 401s (as Discord answers `GET
 * /gateway/bot`) or, with `rejectTokensAt: "gateway"`, a gateway close 4004.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer as readBuffer } from "node:stream/consumers";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { e2eLimit } from "./limits.ts";

const API_PREFIX = "/api/v10";
const GATEWAY_PATH = "/gateway";
const DISCORD_EPOCH = 1_420_070_400_000n;
const MAX_CONTENT = 2000;

/** Gateway opcodes (Discord's numbers). */
const Op = { dispatch: 0, heartbeat: 1, identify: 2, resume: 6, invalidSession: 9, hello: 10, heartbeatAck: 11 } as const;
/** Channel types (Discord's numbers). */
const ChannelKind = { guildText: 0, dm: 1, publicThread: 11 } as const;
/** Gateway intents (Discord's bits). */
export const Intent = { guilds: 1 << 0, guildMessages: 1 << 9, directMessages: 1 << 12, messageContent: 1 << 15 } as const;
/** Message types. */
const MessageKind = { default: 0, reply: 19 } as const;
/** Message flags (Discord's bits). */
const MessageFlag = { isVoiceMessage: 1 << 13 } as const;

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: "0";
  avatar: null;
  bot?: boolean;
}

/** One REST call as the fake saw it. `path` is relative to `/api/v10` ("/channels/1/messages"). */
export interface RecordedCall {
  method: string;
  path: string;
  query: string;
  body: any;
  /** The Authorization header matched `Bot <fake.token>`. */
  authorized: boolean;
  status: number;
  at: number;
}

/** A message in the fake's world, with every version of its content. */
export interface FakeMessage {
  id: string;
  channelId: string;
  guildId: string | undefined;
  author: FakeUser;
  content: string;
  /** The content as created, then after each edit. */
  history: string[];
  /** The message it replies to. */
  replyTo: string | undefined;
  nonce: string | undefined;
  /** Users (ids), roles (`role:<id>`) and `everyone` this message notified, per its allowed_mentions. */
  pings: string[];
  /** The `allowed_mentions` it was sent with (bot messages). */
  allowedMentions: unknown;
  createdAt: number;
  attachments?: FakeAttachment[];
  /** A voice message (flag IS_VOICE_MESSAGE): its one attachment is the recording. */
  voice?: boolean;
  sticker?: boolean;
  /** Message components (action rows of buttons) as the bot last set them. */
  components?: Array<{ type: number; components: Array<{ type: number; style: number; label: string; custom_id: string }> }>;
}

/** An answer the bot gave to an interaction (`POST /interactions/{id}/{token}/callback`). */
export interface InteractionReply {
  interactionId: string;
  /** 4: a message; with `flags` 64 only the presser sees it (ephemeral). */
  type: number;
  content: string | undefined;
  flags: number | undefined;
}

/** A slash command a user used, and how the bot answered it. */
export interface FakeInteraction {
  id: string;
  token: string;
  /** Interaction callbacks, in order: `{ type, data }` (4 a message, 5 deferred). */
  responses: Array<{ type: number; data?: any }>;
  /** Bodies of edits to the original response (PATCH /webhooks/:app/:token/messages/@original). */
  edits: any[];
  /** The content the user sees now (the last edit's, else a type 4 response's), and whether only they see it. */
  shown(): { content: string; ephemeral: boolean } | undefined;
}

export interface IdentifyRecord {
  intents: number;
  shard: unknown;
  compress: unknown;
  at: number;
}

export interface FakeDiscordOptions {
  /** The valid bot token. Default "fake-bot-token". */
  token?: string;
  /** The bot's username. Default "Hearth". */
  botName?: string;
  /** Where a wrong token is refused: REST 401s (default, as Discord does) or a gateway close 4004. */
  rejectTokensAt?: "rest" | "gateway";
  /** The heartbeat_interval sent in HELLO. Default 41250 (Discord's). */
  heartbeatIntervalMs?: number;
}

export interface SendMessageOptions {
  /** A text channel, a thread or a DM channel (see dmChannel). */
  channelId: string;
  author: FakeUser;
  content: string;
  /** Prefixes `<@botId> ` to the content (a user mention of the bot). */
  mentionsBot?: boolean;
  /** The id of the message this one replies to. */
  replyTo?: string;
  /** Whether the reply pings the replied-to author (Discord clients default to yes). Default true. */
  replyPing?: boolean;
  /** Files attached to the message, served at the attachment URL the payload names. */
  attachments?: FakeAttachment[];
  /** Sends it as a voice message (message flag IS_VOICE_MESSAGE, attachment duration and waveform), as the mobile apps do. */
  voice?: boolean;
  /** Adds a sticker (`sticker_items`). */
  sticker?: boolean;
}

export interface FakeAttachment {
  name: string;
  contentType: string;
  bytes: Uint8Array;
  /** The URL the payload names instead of this server's attachment route (another host: an attack). */
  url?: string;
  /** The `size` the payload states; default the bytes' length (Discord states the true size). */
  statedSize?: number;
  /** The attachment URL answers 404 (the file expired or was deleted from the CDN). */
  gone?: boolean;
}

/** Makes the next matching REST calls fail. */
export interface InjectedFailure {
  method: string;
  path: RegExp;
  status: number;
  /** How many calls fail. Default 1. */
  times?: number;
  /** Do the work (create the message…) and then answer with the failure: a lost response. */
  afterEffect?: boolean;
  /** For 429: seconds in `retry_after`. Default 0.05. */
  retryAfterS?: number;
  /** Only calls that upload files (multipart). */
  withFiles?: boolean;
  /** Only calls whose JSON body this accepts (a message with given content). */
  when?: (body: any) => boolean;
  /**
   * Never answer and never apply: the request hangs until the client gives up or dies (a bot
   * killed while its message is on the way). `status` is then unused. With `afterEffect`: the
   * work is done (the message created), and then nothing is answered.
   */
  hang?: boolean;
}

export interface FakeDiscord {
  /** Give to discord.js as `rest: { api }` (and to Hearth as `channels.discord.apiBase`). */
  readonly apiBase: string;
  /** Paths of every request to an attachment URL. */
  readonly attachmentDownloads: string[];
  readonly gatewayUrl: string;
  readonly token: string;
  readonly bot: FakeUser;
  /** Every REST call in arrival order. */
  readonly calls: RecordedCall[];
  readonly gateway: {
    /** WebSocket connections opened. */
    connections: number;
    /** The query string of each connection ("v=10&encoding=json"). */
    queries: string[];
    identifies: IdentifyRecord[];
    resumes: number;
    /** Close codes of connections the client closed (1000 on a clean destroy). */
    clientCloses: number[];
  };
  addUser(name: string, opts?: { bot?: boolean }): FakeUser;
  addGuild(name: string): { id: string };
  addRole(guildId: string, name: string): { id: string };
  addTextChannel(guildId: string, name: string): { id: string };
  addThread(parentId: string, name: string): { id: string };
  /** The DM channel between the bot and `user` (created on first use). */
  dmChannel(user: FakeUser): string;
  /** Posts a user's message and dispatches MESSAGE_CREATE. Returns the message. */
  sendMessage(opts: SendMessageOptions): FakeMessage;
  message(id: string): FakeMessage | undefined;
  /** Messages in a channel, oldest first. */
  messagesIn(channelId: string): FakeMessage[];
  /**
   * `user` presses the button labelled `label` under the bot's message: an INTERACTION_CREATE
   * of type MESSAGE_COMPONENT, as Discord sends it. Returns the interaction's id.
   */
  pressButton(messageId: string, label: string, user: FakeUser): string;
  /** What the bot answered to interactions, in order. */
  readonly interactionReplies: InteractionReply[];
  /** Messages the bot authored, oldest first, optionally in one channel. */
  botMessages(channelId?: string): FakeMessage[];
  /** Messages the bot deleted (DELETE /channels/:id/messages/:id), in the order it deleted them. */
  deletedBotMessages(channelId?: string): FakeMessage[];
  /** REST calls matching a method and a path pattern. */
  callsTo(method: string, path: RegExp): RecordedCall[];
  /** Polls `check` until it returns something other than undefined/false; rejects after timeoutMs (default 10 s). */
  waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  /** True while an identified gateway connection is open. */
  connected(): boolean;
  /** Gateway sockets open right now, identified or not. */
  openGatewaySockets(): number;
  /**
   * Closes the gateway connection from the server side. 4000 (the default) lets the client
   * resume; 1000 makes it identify again; `"drop"` kills the socket without a close frame.
   * Dispatches while disconnected are kept and replayed on RESUME.
   */
  disconnect(code?: number | "drop"): void;
  /** From now on the token is refused everywhere (REST 401, gateway 4004), as after a reset in the Developer Portal. */
  revokeToken(): void;
  /** Holds new gateway connections (an outage) until resumeGateway(); open ones are untouched. */
  pauseGateway(): void;
  resumeGateway(): void;
  injectFailure(failure: InjectedFailure): void;
  /** The application's global commands as last registered (PUT /applications/:id/commands); undefined before any. */
  registeredCommands(): any[] | undefined;
  /**
   * `user` uses slash command `name` in `channelId` (a DM channel or a guild text channel):
   * dispatches INTERACTION_CREATE with string `options`. Returns the interaction, whose
   * `responses` (callbacks) and `edits` (of the original response) fill in as the bot answers.
   */
  useSlashCommand(opts: { user: FakeUser; channelId: string; name: string; options?: Record<string, string> }): FakeInteraction;
  /** Closes everything. Safe to call twice. */
  close(): Promise<void>;
}

interface ChannelRecord {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
  recipient?: FakeUser;
  lastMessageId: string | null;
}

interface GuildRecord {
  id: string;
  name: string;
  roles: Array<{ id: string; name: string }>;
  joinedAt: string;
}

interface Dispatch {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

interface Session {
  id: string;
  seq: number;
  intents: number;
  /** Sent dispatches, for RESUME. */
  log: Dispatch[];
  socket: WebSocket | null;
}

class HttpError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function startFakeDiscord(opts: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const token = opts.token ?? "MTAxNTc0ODg3NjU0MzIxMDk4.GfAkE1.fake-discord-bot-token-0123456789";
  let revoked = false;
  const valid = (t: unknown) => !revoked && t === token;
  const rejectAt = opts.rejectTokensAt ?? "rest";
  const heartbeatInterval = opts.heartbeatIntervalMs ?? 41_250;

  let snowflakeSeq = 0n;
  const snowflake = () => String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (snowflakeSeq++ & 0xfffn));
  const makeUser = (name: string, bot = false): FakeUser => ({
    id: snowflake(),
    username: name,
    global_name: bot ? null : name,
    discriminator: "0",
    avatar: null,
    ...(bot ? { bot: true } : {}),
  });

  const bot = makeUser(opts.botName ?? "Hearth", true);
  const users = new Map<string, FakeUser>([[bot.id, bot]]);
  const guilds = new Map<string, GuildRecord>();
  const channels = new Map<string, ChannelRecord>();
  const messages = new Map<string, FakeMessage>();
  const wire = new Map<string, Record<string, unknown>>(); // message id → API payload
  const calls: RecordedCall[] = [];
  /** Open component (button) interactions: id → token (answered once). */
  const componentTokens = new Map<string, string>();
  const interactionReplies: InteractionReply[] = [];
  const failures: Array<InjectedFailure & { left: number }> = [];
  const deleted: FakeMessage[] = [];
  const gatewayStats: FakeDiscord["gateway"] = { connections: 0, queries: [], identifies: [], resumes: 0, clientCloses: [] };
  let session: Session | null = null;
  let commands: any[] | undefined;
  const interactions = new Map<string, FakeInteraction & { channelId: string }>();

  // ── wire shapes ──────────────────────────────────────────────────────────────────────────

  const channelPayload = (c: ChannelRecord): Record<string, unknown> => {
    switch (c.type) {
      case ChannelKind.dm:
        return { id: c.id, type: c.type, last_message_id: c.lastMessageId, flags: 0, recipients: [c.recipient] };
      case ChannelKind.publicThread:
        return {
          id: c.id,
          type: c.type,
          guild_id: c.guildId,
          parent_id: c.parentId,
          name: c.name,
          owner_id: bot.id,
          last_message_id: c.lastMessageId,
          message_count: 0,
          member_count: 1,
          total_message_sent: 0,
          rate_limit_per_user: 0,
          flags: 0,
          thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
        };
      default:
        return {
          id: c.id,
          type: c.type,
          guild_id: c.guildId,
          name: c.name,
          position: 0,
          permission_overwrites: [],
          nsfw: false,
          topic: null,
          last_message_id: c.lastMessageId,
          parent_id: null,
          rate_limit_per_user: 0,
          flags: 0,
        };
    }
  };

  const rolePayload = (r: { id: string; name: string }, position: number) =>
    ({ id: r.id, name: r.name, permissions: "0", position, color: 0, hoist: false, managed: false, mentionable: true, flags: 0 });

  const memberPayload = (g: GuildRecord) => ({ roles: [], joined_at: g.joinedAt, deaf: false, mute: false, flags: 0, nick: null });

  const guildPayload = (g: GuildRecord) => {
    const inGuild = [...channels.values()].filter((c) => c.guildId === g.id);
    return {
      id: g.id,
      name: g.name,
      icon: null,
      owner_id: bot.id,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      roles: [
        { id: g.id, name: "@everyone", permissions: "1071698660929", position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 },
        ...g.roles.map((r, i) => rolePayload(r, i + 1)),
      ],
      emojis: [],
      stickers: [],
      features: [],
      mfa_level: 0,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      public_updates_channel_id: null,
      premium_tier: 0,
      preferred_locale: "en-US",
      nsfw_level: 0,
      premium_progress_bar_enabled: false,
      joined_at: g.joinedAt,
      large: false,
      unavailable: false,
      member_count: 2,
      members: [{ user: bot, ...memberPayload(g) }],
      channels: inGuild.filter((c) => c.type === ChannelKind.guildText).map(channelPayload),
      threads: inGuild.filter((c) => c.type === ChannelKind.publicThread).map(channelPayload),
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  };

  /** Mentions as Discord parses them from content. */
  const parseMentions = (content: string) => {
    const userIds = [...content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1]!).filter((id, i, all) => users.has(id) && all.indexOf(id) === i);
    const roleIds = [...new Set([...content.matchAll(/<@&(\d+)>/g)].map((m) => m[1]!))];
    const everyone = /@(everyone|here)\b/.test(content);
    return { userIds, roleIds, everyone };
  };

  /** Who a message notifies: everything parsed, narrowed by allowed_mentions when given. */
  const pingsOf = (content: string, repliedAuthor: FakeUser | undefined, replyPing: boolean, allowed: any): string[] => {
    const { userIds, roleIds, everyone } = parseMentions(content);
    const parse: string[] | undefined = allowed && Array.isArray(allowed.parse) ? allowed.parse : undefined;
    const allowUsers = allowed ? (parse?.includes("users") ?? false) : true;
    const allowRoles = allowed ? (parse?.includes("roles") ?? false) : true;
    const allowEveryone = allowed ? (parse?.includes("everyone") ?? false) : true;
    const listedUsers: string[] = allowed && Array.isArray(allowed.users) ? allowed.users : [];
    const listedRoles: string[] = allowed && Array.isArray(allowed.roles) ? allowed.roles : [];
    const pings = new Set<string>();
    for (const id of userIds) if (allowUsers || listedUsers.includes(id)) pings.add(id);
    for (const id of roleIds) if (allowRoles || listedRoles.includes(id)) pings.add(`role:${id}`);
    if (everyone && allowEveryone) pings.add("everyone");
    const repliedPing = allowed && "replied_user" in allowed ? Boolean(allowed.replied_user) : replyPing;
    if (repliedAuthor && repliedPing) pings.add(repliedAuthor.id);
    return [...pings];
  };

  /** Set once the server listens: attachment URLs point at it, as Discord's point at its CDN. */
  let origin = "";
  const attachmentDownloads: string[] = [];

  const messagePayload = (m: FakeMessage, channel: ChannelRecord): Record<string, unknown> => {
    const { userIds, roleIds, everyone } = parseMentions(m.content);
    const guild = channel.guildId ? guilds.get(channel.guildId) : undefined;
    const replied = m.replyTo ? messages.get(m.replyTo) : undefined;
    const mentionIds = new Set(userIds);
    // Discord lists the replied-to author among the mentions when the reply pings them.
    if (replied && m.pings.includes(replied.author.id)) mentionIds.add(replied.author.id);
    const mentionUser = (id: string) => ({ ...users.get(id)!, ...(guild ? { member: memberPayload(guild) } : {}) });
    return {
      id: m.id,
      type: m.replyTo ? MessageKind.reply : MessageKind.default,
      channel_id: m.channelId,
      ...(guild ? { guild_id: guild.id, member: memberPayload(guild) } : {}),
      ...(channel.type === ChannelKind.dm ? { channel_type: ChannelKind.dm } : {}),
      author: m.author,
      content: m.content,
      timestamp: new Date(m.createdAt).toISOString(),
      edited_timestamp: m.history.length > 1 ? new Date().toISOString() : null,
      tts: false,
      mention_everyone: everyone,
      mentions: [...mentionIds].map(mentionUser),
      mention_roles: roleIds,
      attachments: (m.attachments ?? []).map((a, i) => {
        const url = a.url ?? `${origin}/attachments/${m.channelId}/${m.id}/${i}/${encodeURIComponent(a.name)}`;
        const voice = m.voice ? { duration_secs: 2, waveform: "AAAA" } : {};
        return { id: `${m.id}${i}`, filename: a.name, size: a.statedSize ?? a.bytes.length, url, proxy_url: url, content_type: a.contentType, ...voice };
      }),
      embeds: [],
      pinned: false,
      flags: m.voice ? MessageFlag.isVoiceMessage : 0,
      ...(m.sticker ? { sticker_items: [{ id: "749054660769218631", name: "Wave", format_type: 1 }] } : {}),
      components: m.components ?? [],
      ...(m.nonce !== undefined ? { nonce: m.nonce } : {}),
      ...(replied
        ? {
            message_reference: { type: 0, message_id: replied.id, channel_id: replied.channelId, ...(guild ? { guild_id: guild.id } : {}) },
            referenced_message: wire.get(replied.id) ?? null,
          }
        : {}),
    };
  };

  // ── the gateway ──────────────────────────────────────────────────────────────────────────

  const wss = new WebSocketServer({ noServer: true });
  /** Sockets the fake closed itself (their close codes are not the client's). */
  const serverClosed = new WeakSet<WebSocket>();

  const sendRaw = (ws: WebSocket, payload: unknown) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(payload));
  };

  /** Sends a dispatch on the current session; kept for RESUME when the socket is down. */
  const dispatch = (t: string, d: unknown) => {
    if (!session) return;
    const packet: Dispatch = { op: Op.dispatch, t, s: ++session.seq, d };
    session.log.push(packet);
    if (session.log.length > 1000) session.log.shift();
    if (session.socket) sendRaw(session.socket, packet);
  };

  /** MESSAGE_CREATE / MESSAGE_UPDATE as the bot's intents allow it to see them. */
  const dispatchMessage = (t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", m: FakeMessage) => {
    if (!session) return;
    const channel = channels.get(m.channelId)!;
    const isDm = channel.type === ChannelKind.dm;
    if (!(session.intents & (isDm ? Intent.directMessages : Intent.guildMessages))) return;
    const payload = messagePayload(m, channel);
    const canRead = session.intents & Intent.messageContent || isDm || m.author.id === bot.id || parseMentions(m.content).userIds.includes(bot.id);
    dispatch(t, canRead ? payload : { ...payload, content: "", embeds: [], attachments: [], components: [] });
  };

  const onGatewayPacket = (ws: WebSocket, packet: { op: number; d: any }) => {
    switch (packet.op) {
      case Op.heartbeat:
        sendRaw(ws, { op: Op.heartbeatAck });
        return;
      case Op.identify: {
        gatewayStats.identifies.push({ intents: packet.d?.intents, shard: packet.d?.shard, compress: packet.d?.compress, at: Date.now() });
        if (!valid(packet.d?.token)) {
          ws.close(4004, "Authentication failed.");
          return;
        }
        if (session?.socket && session.socket !== ws) session.socket.close(4000, "replaced by a new session");
        session = { id: randomBytes(16).toString("hex"), seq: 0, intents: Number(packet.d.intents) || 0, log: [], socket: ws };
        dispatch("READY", {
          v: 10,
          user: bot,
          guilds: [...guilds.keys()].map((id) => ({ id, unavailable: true })),
          session_id: session.id,
          resume_gateway_url: gatewayUrl,
          shard: packet.d.shard ?? [0, 1],
          application: { id: bot.id, flags: 0 },
          private_channels: [],
          relationships: [],
          presences: [],
          guild_join_requests: [],
          geo_ordered_rtc_regions: [],
          user_settings: {},
        });
        for (const g of guilds.values()) dispatch("GUILD_CREATE", guildPayload(g));
        return;
      }
      case Op.resume: {
        gatewayStats.resumes++;
        const d = packet.d ?? {};
        if (!valid(d.token)) {
          ws.close(4004, "Authentication failed.");
          return;
        }
        if (!session || d.session_id !== session.id) {
          sendRaw(ws, { op: Op.invalidSession, d: false });
          return;
        }
        if (session.socket && session.socket !== ws) session.socket.close(4000, "resumed elsewhere");
        session.socket = ws;
        for (const p of session.log) if (p.s > Number(d.seq)) sendRaw(ws, p);
        dispatch("RESUMED", {});
        return;
      }
      default:
        return;
    }
  };

  wss.on("connection", (ws, req) => {
    gatewayStats.connections++;
    gatewayStats.queries.push(new URL(req.url ?? "/", "http://x").search.slice(1));
    ws.on("message", (data: RawData) => {
      try {
        onGatewayPacket(ws, JSON.parse(data.toString()));
      } catch {
        ws.close(4002, "Error while decoding payload.");
      }
    });
    ws.on("close", (code) => {
      if (session?.socket === ws) session.socket = null;
      if (!serverClosed.has(ws)) gatewayStats.clientCloses.push(code);
    });
    sendRaw(ws, { op: Op.hello, d: { heartbeat_interval: heartbeatInterval } });
  });

  // ── REST ─────────────────────────────────────────────────────────────────────────────────

  const notFound = (code: number, message: string) => new HttpError(404, { message, code });
  const invalidForm = (field: string, code: string, message: string) =>
    new HttpError(400, { message: "Invalid Form Body", code: 50035, errors: { [field]: { _errors: [{ code, message }] } } });

  const channelOr404 = (id: string) => {
    const c = channels.get(id);
    if (!c) throw notFound(10003, "Unknown Channel");
    return c;
  };

  const checkContent = (content: unknown, files = false): string => {
    // A message with files may have no text (Discord's rule: content, embeds or files).
    if (files && (content === undefined || content === "")) return "";
    if (typeof content !== "string" || content.length === 0) throw new HttpError(400, { message: "Cannot send an empty message", code: 50006 });
    if (content.length > MAX_CONTENT) throw invalidForm("content", "BASE_TYPE_MAX_LENGTH", `Must be ${MAX_CONTENT} or fewer in length.`);
    return content;
  };

  const recordMessage = (m: FakeMessage) => {
    const channel = channels.get(m.channelId)!;
    messages.set(m.id, m);
    channel.lastMessageId = m.id;
    wire.set(m.id, messagePayload(m, channel));
  };

  const createBotMessage = (channel: ChannelRecord, body: any): FakeMessage => {
    const content = checkContent(body?.content, Boolean(body?.__uploads?.length));
    const nonce = body?.nonce === undefined ? undefined : String(body.nonce);
    if (nonce !== undefined && nonce.length > 25) throw invalidForm("nonce", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.");
    if (nonce !== undefined && body.enforce_nonce) {
      const cutoff = Date.now() - 5 * 60_000;
      const existing = [...messages.values()].find((m) => m.author.id === bot.id && m.nonce === nonce && m.createdAt > cutoff);
      if (existing) return existing;
    }
    const ref = body?.message_reference;
    let replied: FakeMessage | undefined;
    if (ref?.message_id !== undefined) {
      replied = messages.get(String(ref.message_id));
      const inChannel = replied && replied.channelId === String(ref.channel_id ?? channel.id);
      if (!inChannel) {
        replied = undefined;
        if (ref.fail_if_not_exists !== false) throw invalidForm("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message");
      }
    }
    const m: FakeMessage = {
      id: snowflake(),
      channelId: channel.id,
      guildId: channel.guildId,
      author: bot,
      content,
      history: [content],
      replyTo: replied?.id,
      nonce,
      pings: pingsOf(content, replied?.author, true, body?.allowed_mentions),
      allowedMentions: body?.allowed_mentions,
      createdAt: Date.now(),
      ...(Array.isArray(body?.components) ? { components: body.components } : {}),
    };
    recordMessage(m);
    dispatchMessage("MESSAGE_CREATE", m);
    return m;
  };

  const editBotMessage = (channel: ChannelRecord, id: string, body: any): FakeMessage => {
    const m = messages.get(id);
    if (!m || m.channelId !== channel.id) throw notFound(10008, "Unknown Message");
    if (m.author.id !== bot.id) throw new HttpError(403, { message: "Cannot edit a message authored by another user", code: 50005 });
    if (body?.content !== undefined) {
      m.content = checkContent(body.content);
      m.history.push(m.content);
    }
    if (body?.allowed_mentions !== undefined) m.allowedMentions = body.allowed_mentions;
    if (Array.isArray(body?.components)) m.components = body.components;
    wire.set(m.id, messagePayload(m, channel));
    dispatchMessage("MESSAGE_UPDATE", m);
    return m;
  };

  const dmChannelFor = (user: FakeUser): ChannelRecord => {
    const existing = [...channels.values()].find((c) => c.type === ChannelKind.dm && c.recipient?.id === user.id);
    if (existing) return existing;
    const c: ChannelRecord = { id: snowflake(), type: ChannelKind.dm, recipient: user, lastMessageId: null };
    channels.set(c.id, c);
    return c;
  };

  /** Routes one authorised REST call; returns [status, body]. */
  const route = (method: string, path: string, body: any): [number, unknown] => {
    let m: RegExpExecArray | null;
    if ((m = /^\/applications\/(\d+)\/commands$/.exec(path))) {
      if (m[1] !== bot.id) throw notFound(10002, "Unknown Application");
      if (method === "PUT") {
        if (!Array.isArray(body)) throw invalidForm("_", "BASE_TYPE_ARRAY", "Must be an array.");
        commands = body.map((c: any) => ({ ...c, id: snowflake(), application_id: bot.id, version: snowflake() }));
        return [200, commands];
      }
      if (method === "GET") return [200, commands ?? []];
    }
    if ((m = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path)) && method === "POST" && interactions.has(m[1]!)) {
      const i = interactions.get(m[1]!);
      if (!i || i.token !== m[2]) throw notFound(10062, "Unknown interaction");
      if (i.responses.length > 0) throw new HttpError(400, { message: "Interaction has already been acknowledged.", code: 40060 });
      i.responses.push({ type: Number(body?.type), ...(body?.data !== undefined ? { data: body.data } : {}) });
      return [204, undefined];
    }
    if ((m = /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path)) && method === "PATCH") {
      const i = [...interactions.values()].find((x) => x.token === m![2] && m![1] === bot.id);
      if (!i || i.responses.length === 0) throw notFound(10008, "Unknown Message");
      i.edits.push(body);
      return [200, { id: snowflake(), channel_id: i.channelId, content: String(body?.content ?? ""), flags: i.responses[0]!.data?.flags ?? 0, author: bot, attachments: [], embeds: [], mentions: [], mention_roles: [], pinned: false, mention_everyone: false, tts: false, timestamp: new Date().toISOString(), edited_timestamp: null, type: 0, components: [] }];
    }
    if (method === "GET" && path === "/users/@me") return [200, bot];
    if (method === "POST" && path === "/users/@me/channels") {
      const user = users.get(String(body?.recipient_id));
      if (!user) throw notFound(10013, "Unknown User");
      return [200, channelPayload(dmChannelFor(user))];
    }
    if ((m = /^\/channels\/(\d+)$/.exec(path)) && method === "GET") return [200, channelPayload(channelOr404(m[1]!))];
    if ((m = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path)) && method === "POST") {
      if (!componentTokens.has(m[1]!) || componentTokens.get(m[1]!) !== m[2]) throw notFound(10062, "Unknown interaction");
      componentTokens.delete(m[1]!);
      interactionReplies.push({ interactionId: m[1]!, type: Number(body?.type), content: body?.data?.content, flags: body?.data?.flags });
      return [204, undefined];
    }
    if ((m = /^\/channels\/(\d+)\/typing$/.exec(path)) && method === "POST") {
      channelOr404(m[1]!);
      return [204, undefined];
    }
    if ((m = /^\/channels\/(\d+)\/messages$/.exec(path)) && method === "POST") {
      const channel = channelOr404(m[1]!);
      const message = createBotMessage(channel, body);
      if (body?.__uploads?.length) {
        message.attachments = body.__uploads;
        wire.set(message.id, messagePayload(message, channel));
      }
      return [200, wire.get(message.id)];
    }
    if ((m = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path))) {
      const channel = channelOr404(m[1]!);
      if (method === "PATCH") return [200, wire.get(editBotMessage(channel, m[2]!, body).id)];
      if (method === "DELETE") {
        const found = messages.get(m[2]!);
        if (!found || found.channelId !== channel.id) throw notFound(10008, "Unknown Message");
        if (found.author.id !== bot.id) throw new HttpError(403, { message: "Missing Permissions", code: 50013 });
        messages.delete(found.id);
        wire.delete(found.id);
        deleted.push(found);
        return [204, undefined];
      }
      if (method === "GET") {
        const found = messages.get(m[2]!);
        if (!found || found.channelId !== channel.id) throw notFound(10008, "Unknown Message");
        return [200, wire.get(found.id)];
      }
    }
    throw new HttpError(404, { message: "404: Not Found", code: 0 });
  };

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (body === undefined) {
      res.writeHead(status, headers).end();
      return;
    }
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };

  const handleHttp = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = req.method ?? "GET";
    const bytes = await readBuffer(req);
    const type = req.headers["content-type"] ?? "";
    let body: any = null;
    if (type.startsWith("multipart/form-data")) {
      // A message with files: `payload_json` is the body, every file part an attachment.
      const form = await new Request("http://x/", { method: "POST", headers: { "content-type": type }, body: bytes }).formData();
      body = JSON.parse(String(form.get("payload_json") ?? "{}"));
      const uploads: FakeAttachment[] = [];
      for (const [, v] of form.entries()) if (typeof v !== "string") uploads.push({ name: v.name, contentType: v.type, bytes: new Uint8Array(await v.arrayBuffer()) });
      body.__uploads = uploads;
    } else {
      const raw = bytes.toString("utf8");
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
    }
    const path = url.pathname.startsWith(API_PREFIX) ? url.pathname.slice(API_PREFIX.length) : url.pathname;
    const authorized = valid(req.headers.authorization?.replace(/^Bot /, ""));
    const call: RecordedCall = { method, path, query: url.search.slice(1), body, authorized, status: 0, at: Date.now() };
    calls.push(call);
    const answer = (status: number, payload: unknown, headers?: Record<string, string>) => {
      call.status = status;
      reply(res, status, payload, headers);
    };

    const file = /^\/attachments\/\d+\/(\d+)\/(\d+)\//.exec(url.pathname);
    if (method === "GET" && file) {
      const stored = messages.get(file[1]!)?.attachments?.[Number(file[2])];
      const bytes = stored?.gone ? undefined : stored?.bytes;
      attachmentDownloads.push(url.pathname);
      call.status = bytes ? 200 : 404;
      if (!bytes) return void res.writeHead(404).end();
      return void res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(bytes.length) }).end(bytes);
    }
    if (!url.pathname.startsWith(API_PREFIX)) return answer(404, { message: "404: Not Found", code: 0 });
    if (method === "GET" && path === "/gateway") return answer(200, { url: gatewayUrl });
    // Interaction callbacks and their webhook are authorised by the interaction's token in the path, as on Discord.
    const tokenInPath = /^\/(interactions|webhooks)\//.test(path);
    if (!authorized && !tokenInPath && (rejectAt === "rest" || !req.headers.authorization?.startsWith("Bot "))) {
      return answer(401, { message: "401: Unauthorized", code: 0 });
    }
    if (method === "GET" && path === "/gateway/bot") {
      return answer(200, {
        url: gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
      });
    }

    const failure = failures.find((f) => f.left > 0 && f.method === method && f.path.test(path) && (!f.withFiles || Boolean(body?.__uploads?.length)) && (!f.when || f.when(body)));
    if (failure) failure.left--;
    if (failure?.hang && !failure.afterEffect) return; // never applied, never answered: close() ends the connection
    const fail = () => {
      const retryAfter = failure!.retryAfterS ?? 0.05;
      if (failure!.status === 429) {
        return answer(429, { message: "You are being rate limited.", retry_after: retryAfter, global: false }, { "retry-after": String(retryAfter), "x-ratelimit-scope": "user" });
      }
      return answer(failure!.status, { message: `${failure!.status}: injected failure`, code: 0 });
    };
    if (failure && !failure.afterEffect) return fail();
    try {
      const [status, payload] = route(method, path, body);
      if (failure?.hang) return; // applied, never answered
      return failure ? fail() : answer(status, payload);
    } catch (err) {
      if (err instanceof HttpError) return answer(err.status, err.body);
      return answer(500, { message: `fake discord: ${(err as Error).message}`, code: 0 });
    }
  };

  const server = createServer((req, res) => {
    handleHttp(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ message: String(err), code: 0 }));
    });
  });
  let held: Array<{ accept: () => void; drop: () => void }> | null = null;
  server.on("upgrade", (req, socket, head) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== GATEWAY_PATH) {
      socket.destroy();
      return;
    }
    const accept = () => wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
    if (held) held.push({ accept, drop: () => socket.destroy() });
    else accept();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const apiBase = `http://127.0.0.1:${port}/api`;
  origin = `http://127.0.0.1:${port}`;
  const gatewayUrl = `ws://127.0.0.1:${port}${GATEWAY_PATH}`;

  // ── the test-facing API ──────────────────────────────────────────────────────────────────

  let closed: Promise<void> | null = null;
  const fake: FakeDiscord = {
    apiBase,
    attachmentDownloads,
    gatewayUrl,
    token,
    bot,
    calls,
    gateway: gatewayStats,
    addUser(name, o = {}) {
      const user = makeUser(name, o.bot ?? false);
      users.set(user.id, user);
      return user;
    },
    addGuild(name) {
      const g: GuildRecord = { id: snowflake(), name, roles: [], joinedAt: new Date().toISOString() };
      guilds.set(g.id, g);
      dispatch("GUILD_CREATE", guildPayload(g));
      return { id: g.id };
    },
    addRole(guildId, name) {
      const g = guilds.get(guildId);
      if (!g) throw new Error(`fake discord: no guild ${guildId}`);
      const role = { id: snowflake(), name };
      g.roles.push(role);
      dispatch("GUILD_ROLE_CREATE", { guild_id: guildId, role: rolePayload(role, g.roles.length) });
      return { id: role.id };
    },
    addTextChannel(guildId, name) {
      if (!guilds.has(guildId)) throw new Error(`fake discord: no guild ${guildId}`);
      const c: ChannelRecord = { id: snowflake(), type: ChannelKind.guildText, name, guildId, lastMessageId: null };
      channels.set(c.id, c);
      dispatch("CHANNEL_CREATE", channelPayload(c));
      return { id: c.id };
    },
    addThread(parentId, name) {
      const parent = channels.get(parentId);
      if (!parent || parent.type !== ChannelKind.guildText) throw new Error(`fake discord: no text channel ${parentId}`);
      const c: ChannelRecord = { id: snowflake(), type: ChannelKind.publicThread, name, guildId: parent.guildId!, parentId, lastMessageId: null };
      channels.set(c.id, c);
      dispatch("THREAD_CREATE", { ...channelPayload(c), newly_created: true });
      return { id: c.id };
    },
    dmChannel: (user) => dmChannelFor(user).id,
    sendMessage(o) {
      const channel = channels.get(o.channelId);
      if (!channel) throw new Error(`fake discord: no channel ${o.channelId}`);
      const content = o.mentionsBot ? `<@${bot.id}> ${o.content}` : o.content;
      const replied = o.replyTo ? messages.get(o.replyTo) : undefined;
      if (o.replyTo && !replied) throw new Error(`fake discord: no message ${o.replyTo}`);
      const m: FakeMessage = {
        id: snowflake(),
        channelId: channel.id,
        guildId: channel.guildId,
        author: o.author,
        content,
        history: [content],
        replyTo: replied?.id,
        nonce: undefined,
        pings: pingsOf(content, replied?.author, o.replyPing ?? true, undefined),
        allowedMentions: undefined,
        createdAt: Date.now(),
        ...(o.attachments ? { attachments: o.attachments } : {}),
        ...(o.voice ? { voice: true } : {}),
        ...(o.sticker ? { sticker: true } : {}),
      };
      recordMessage(m);
      dispatchMessage("MESSAGE_CREATE", m);
      return m;
    },
    interactionReplies,
    pressButton(messageId, label, user) {
      const m = messages.get(messageId);
      const button = m?.components?.flatMap((row) => row.components).find((b) => b.label === label);
      if (!m || !button) throw new Error(`fake discord: no button "${label}" under message ${messageId}`);
      const channel = channels.get(m.channelId)!;
      const guild = channel.guildId ? guilds.get(channel.guildId) : undefined;
      const id = snowflake();
      const itoken = `interaction-${id}`;
      componentTokens.set(id, itoken);
      dispatch("INTERACTION_CREATE", {
        id,
        application_id: bot.id,
        type: 3,
        token: itoken,
        version: 1,
        data: { custom_id: button.custom_id, component_type: 2 },
        channel_id: channel.id,
        channel: channelPayload(channel),
        ...(guild ? { guild_id: guild.id, member: { ...memberPayload(guild), user } } : { user }),
        message: wire.get(m.id),
        locale: "en-US",
        app_permissions: "0",
        entitlements: [],
        authorizing_integration_owners: {},
        context: guild ? 0 : 1,
      });
      return id;
    },
    message: (id) => messages.get(id),
    messagesIn: (channelId) => [...messages.values()].filter((m) => m.channelId === channelId),
    botMessages: (channelId) => [...messages.values()].filter((m) => m.author.id === bot.id && (channelId === undefined || m.channelId === channelId)),
    deletedBotMessages: (channelId) => deleted.filter((m) => channelId === undefined || m.channelId === channelId),
    callsTo: (method, path) => calls.filter((c) => c.method === method && path.test(c.path)),
    async waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs?: number): Promise<T> {
      const limit = e2eLimit(timeoutMs);
      const deadline = Date.now() + limit;
      for (;;) {
        const value = check();
        if (value !== undefined && value !== false) return value as T;
        if (Date.now() > deadline) throw new Error(`fake discord: timed out after ${limit} ms waiting for ${what}`);
        await sleep(10);
      }
    },
    connected: () => Boolean(session?.socket && session.socket.readyState === WebSocket.OPEN),
    openGatewaySockets: () => [...wss.clients].filter((ws) => ws.readyState === WebSocket.OPEN).length,
    disconnect(code = 4000) {
      const ws = session?.socket;
      if (!ws) return;
      serverClosed.add(ws);
      session!.socket = null;
      if (code === "drop") ws.terminate();
      else ws.close(code, "fake discord: disconnect");
      // A clean 1000 close ends the session: the client must identify again.
      if (code === 1000) session = null;
    },
    revokeToken() {
      revoked = true;
    },
    pauseGateway() {
      held ??= [];
    },
    resumeGateway() {
      const waiting = held ?? [];
      held = null;
      for (const h of waiting) h.accept();
    },
    injectFailure(f) {
      failures.push({ ...f, left: f.times ?? 1 });
    },
    registeredCommands: () => commands,
    useSlashCommand(o) {
      const channel = channels.get(o.channelId);
      if (!channel) throw new Error(`fake discord: no channel ${o.channelId}`);
      const guild = channel.guildId ? guilds.get(channel.guildId) : undefined;
      const registered = commands?.find((c) => c.name === o.name);
      const interaction: FakeInteraction & { channelId: string } = {
        id: snowflake(),
        token: randomBytes(24).toString("base64url"),
        channelId: channel.id,
        responses: [],
        edits: [],
        shown() {
          const first = this.responses[0];
          if (!first) return undefined;
          const ephemeral = ((first.data?.flags ?? 0) & 64) !== 0;
          const last = this.edits.at(-1);
          if (last !== undefined) return { content: String(last.content ?? ""), ephemeral };
          return first.type === 4 ? { content: String(first.data?.content ?? ""), ephemeral } : undefined;
        },
      };
      interactions.set(interaction.id, interaction);
      const options = Object.entries(o.options ?? {}).map(([name, value]) => ({ name, type: 3, value }));
      dispatch("INTERACTION_CREATE", {
        id: interaction.id,
        application_id: bot.id,
        type: 2,
        data: { id: registered?.id ?? snowflake(), name: o.name, type: 1, ...(options.length ? { options } : {}) },
        channel_id: channel.id,
        channel: channelPayload(channel),
        ...(guild ? { guild_id: guild.id, guild_locale: "en-US", member: { user: o.user, ...memberPayload(guild), permissions: "0" } } : { user: o.user }),
        token: interaction.token,
        version: 1,
        app_permissions: "0",
        locale: "en-US",
        entitlements: [],
        authorizing_integration_owners: guild ? { "0": guild.id } : { "1": o.user.id },
        context: guild ? 0 : 1,
        attachment_size_limit: 10_485_760,
      });
      return interaction;
    },
    close() {
      closed ??= (async () => {
        for (const h of held ?? []) h.drop();
        held = null;
        for (const ws of wss.clients) {
          serverClosed.add(ws);
          ws.terminate();
        }
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closed;
    },
  };
  return fake;
}

// ── helpers for tests of split replies ──────────────────────────────────────────────────

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/** Every fenced code block in `text` is closed (an even number of fence lines). */
export function fencesBalanced(text: string): boolean {
  return text.split("\n").filter((line) => FENCE_LINE.test(line)).length % 2 === 0;
}

/**
 * Joins the messages of a split reply back into one text, whitespace squashed, dropping the
 * fence lines a splitter adds where it cut through a code block: a closing fence at the end of
 * a message whose block was still open, when the next message reopens it with the same line.
 */
export function rejoinMessages(messages: readonly string[]): string {
  const parts = messages.map((m) => m.split("\n"));
  for (let i = 0; i < parts.length - 1; i++) {
    const lines = parts[i]!;
    const next = parts[i + 1]!;
    // With an odd number of fence lines before the last line, the last of them opened a block
    // that is still open: a fence line after it, and the same opener atop the next message,
    // are the splitter's.
    const fences = lines.slice(0, -1).filter((l) => FENCE_LINE.test(l));
    const opener = fences.length % 2 === 1 ? fences.at(-1)!.trim() : undefined;
    if (opener !== undefined && FENCE_LINE.test(lines.at(-1)!) && next[0]!.trim() === opener) {
      lines.pop();
      next.shift();
    }
  }
  return parts.map((p) => p.join("\n")).join("\n").replace(/\s+/g, " ").trim();
}

/** Prose, a code block too long for one Discord message, more prose: about 4,600 characters. */
export function longMarkdownAnswer(): string {
  const para = (n: number) => `Paragraph ${n}: ${"the quick brown fox jumps over the lazy dog ".repeat(9).trim()}.`;
  const code = Array.from({ length: 40 }, (_, i) => `  const value${String(i).padStart(2, "0")} = compute(${i}, "some argument text");`).join("\n");
  return [para(1), para(2), para(3), "Here is the code:", `\`\`\`ts\n${code}\n\`\`\``, para(4), para(5), para(6)].join("\n\n");
}
