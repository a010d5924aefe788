/**
 * A fake Slack on 127.0.0.1 for tests: the Web API methods a Socket Mode bot uses (under
 * `/api/`, form-encoded or JSON, `Authorization: Bearer`) and the Socket Mode WebSocket that
 * `apps.connections.open` names (a `hello`, envelopes of `events_api` and `interactive`
 * payloads, pings, and the client's envelope acks). @slack/bolt talks to it with
 * `clientOptions.slackApiUrl` = `fake.apiUrl`, as it does with the real Slack.
 *
 * It models what tests rely on: users, channels and DM channels; messages (with threads, files
 * and `<@bot>` mentions) delivered as `message` events; the bot's messages with every version of
 * their text (`&amp;`, `&lt;`, `&gt;` shown as the characters they stand for) and their Block
 * Kit buttons; ephemeral answers; reactions; files uploaded through the external upload flow
 * and served at `url_private` to the bot token only; message metadata, which
 * conversations.history and conversations.replies list with `include_all_metadata`, as Slack
 * does. An envelope stays pending until acked: a
 * new connection gets every pending one again (as Slack retries), `redeliver` sends one again
 * with the next `retry_attempt`. Injected failures answer a Web API method with an error, a 429
 * with Retry-After, or never (before or after applying it).
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer as readBuffer } from "node:stream/consumers";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket, WebSocketServer } from "ws";
import { e2eLimit } from "./limits.ts";

export interface FakeSlackUser {
  id: string;
  name: string;
}

export interface FakeSlackButton {
  label: string;
  actionId: string;
  value: string;
}

/** A message in the fake's world, with every version of its text as shown. */
export interface FakeSlackMessage {
  ts: string;
  channel: string;
  /** The thread it is in (its parent's ts), when it is a reply in a thread. */
  threadTs: string | undefined;
  user: string;
  text: string;
  history: string[];
  /** Its buttons now (from its `actions` blocks). */
  buttons: FakeSlackButton[];
  files: Array<{ id: string; name: string; bytes: Uint8Array }>;
  reactions: string[];
  /** Its message metadata, as posted. */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

/** One Web API call as the fake saw it. */
export interface SlackCall {
  method: string;
  args: Record<string, any>;
  token: string | undefined;
  status: number;
  at: number;
}

export interface SlackFailure {
  method: string;
  /**
   * `error`: `{ok: false, error}`; `rate_limited`: HTTP 429 with Retry-After; `hang`: never
   * applied, never answered; `apply_then_hang`: applied (the message is posted), never answered.
   */
  kind: "error" | "rate_limited" | "hang" | "apply_then_hang";
  error?: string;
  retryAfterSeconds?: number;
  /** Only calls whose arguments match. */
  when?: (args: Record<string, any>) => boolean;
  times?: number;
}

export interface FakeSlack {
  readonly apiUrl: string;
  readonly botToken: string;
  readonly appToken: string;
  readonly bot: FakeSlackUser;
  readonly teamId: string;
  addUser(name: string): FakeSlackUser;
  /** The bot's DM channel with `user` (made on first use). */
  dmChannel(user: FakeSlackUser): string;
  addChannel(name: string): string;
  /**
   * `user` posts `text` in `channel` (a thread reply with `threadTs`); `mention` puts `<@bot>`
   * before it. Resolves once the fake has sent the event (pending until acked).
   */
  postMessage(m: { channel: string; user: FakeSlackUser; text: string; threadTs?: string; mention?: boolean; files?: Array<{ name: string; mime: string; bytes: Uint8Array; subtype?: string; durationMs?: number }> }): { ts: string; eventId: string; envelopeId: string };
  /** Sends the event of envelope `envelopeId` again, as Slack retries an event whose ack was late. */
  redeliver(envelopeId: string): string;
  /** Presses the button labelled `label` under message `ts`; returns the envelope id of the press. */
  pressButton(ts: string, label: string, user: FakeSlackUser): string;
  message(ts: string): FakeSlackMessage | undefined;
  botMessages(channel?: string): FakeSlackMessage[];
  deletedBotMessages(channel?: string): FakeSlackMessage[];
  ephemerals: Array<{ channel: string; user: string; text: string }>;
  calls: SlackCall[];
  /** Envelope ids the client acked, in order. */
  acks: string[];
  /** Envelope ids sent, with how many times. */
  deliveries(envelopeId: string): number;
  injectFailure(f: SlackFailure): void;
  connected(): boolean;
  /** How many Socket Mode connections said hello. */
  readonly connections: number;
  /** Drops the socket without a close frame and refuses new ones until `restore`. */
  dropConnection(): void;
  restore(): void;
  waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

const unescape = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const PING_EVERY_MS = 2000;

export async function startFakeSlack(): Promise<FakeSlack> {
  const botToken = `xoxb-${randomBytes(8).toString("hex")}`;
  const appToken = `xapp-1-${randomBytes(8).toString("hex")}`;
  const teamId = "T0FAKE";
  let ids = 0;
  const newId = (prefix: string) => `${prefix}${String(++ids).padStart(8, "0")}`;
  const bot: FakeSlackUser = { id: "UBOT0001", name: "hearth" };
  const users = new Map<string, FakeSlackUser>([[bot.id, bot]]);
  const dms = new Map<string, string>();
  const channels = new Map<string, { name: string; type: "im" | "channel" }>();
  const messages = new Map<string, FakeSlackMessage>();
  const deleted: FakeSlackMessage[] = [];
  const uploads = new Map<string, { name: string; bytes?: Uint8Array; length: number }>();
  const served = new Map<string, Uint8Array>();
  const ephemerals: FakeSlack["ephemerals"] = [];
  const calls: SlackCall[] = [];
  const acks: string[] = [];
  const failures: Array<SlackFailure & { left: number }> = [];
  /** Envelopes sent and not acked, by id, with their delivery count. */
  const pending = new Map<string, { envelope: Record<string, any>; sent: number }>();
  /** Every envelope ever sent (acked ones too: `redeliver` may send them again). */
  const sent = new Map<string, { envelope: Record<string, any>; sent: number }>();
  const sentCount = new Map<string, number>();
  let clock = 1_700_000_000;
  const newTs = () => `${++clock}.000100`;
  let socket: WebSocket | null = null;
  let dropped = false;
  let connections = 0;
  const hung: ServerResponse[] = [];

  const server = createServer((req, res) => void handle(req, res).catch((err) => reply(res, 500, { ok: false, error: String(err) })));
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, sock, head) => {
    if (dropped || !req.url?.startsWith("/socket")) {
      sock.destroy();
      return;
    }
    wss.handleUpgrade(req, sock, head, (ws) => {
      socket = ws;
      connections++;
      ws.on("message", (data) => {
        const msg = JSON.parse(String(data)) as { envelope_id?: string };
        if (!msg.envelope_id) return;
        acks.push(msg.envelope_id);
        pending.delete(msg.envelope_id);
      });
      ws.send(JSON.stringify({ type: "hello", num_connections: 1, debug_info: { host: "fake" }, connection_info: { app_id: "AFAKE" } }));
      // What was not acked on the last connection comes again, as Slack retries it.
      for (const [id, p] of pending) send(id, p, true);
    });
  });
  const pinger = setInterval(() => {
    if (socket?.readyState === WebSocket.OPEN) socket.ping();
  }, PING_EVERY_MS);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  function send(id: string, p: { envelope: Record<string, any>; sent: number }, retry: boolean) {
    if (socket?.readyState !== WebSocket.OPEN) return;
    const envelope = retry && p.sent > 0 ? { ...p.envelope, retry_attempt: p.sent, retry_reason: "timeout" } : p.envelope;
    p.sent++;
    sentCount.set(id, (sentCount.get(id) ?? 0) + 1);
    socket.send(JSON.stringify(envelope));
  }

  function enqueue(type: "events_api" | "interactive", payload: Record<string, any>): string {
    const envelopeId = `env-${randomBytes(6).toString("hex")}`;
    const p = { envelope: { envelope_id: envelopeId, type, payload, accepts_response_payload: type === "interactive", retry_attempt: 0, retry_reason: "" }, sent: 0 };
    pending.set(envelopeId, p);
    sent.set(envelopeId, p);
    send(envelopeId, p, false);
    return envelopeId;
  }

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };

  function view(m: FakeSlackMessage, text: string, blocks: unknown) {
    m.text = unescape(text);
    m.history.push(m.text);
    m.buttons = buttonsOf(blocks);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", origin);
    const raw = await readBuffer(req);
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (url.pathname.startsWith("/files-pri/")) {
      const bytes = served.get(url.pathname);
      if (!bytes || auth !== botToken) return reply(res, 404, { ok: false });
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(bytes.length) });
      res.end(Buffer.from(bytes));
      return;
    }
    if (url.pathname.startsWith("/upload/")) {
      const id = url.pathname.slice("/upload/".length);
      const u = uploads.get(id);
      if (!u) return reply(res, 404, { ok: false });
      const form = await new Request(url, { method: "POST", headers: req.headers as Record<string, string>, body: raw }).formData().catch(() => null);
      const part = form?.get("body") ?? form?.get("file");
      u.bytes = part instanceof Blob ? new Uint8Array(await part.arrayBuffer()) : new Uint8Array(raw);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("OK - " + u.bytes.length);
      return;
    }
    const method = url.pathname.replace(/^\/api\//, "");
    const type = req.headers["content-type"] ?? "";
    const args: Record<string, any> = type.includes("json") ? JSON.parse(String(raw) || "{}") : Object.fromEntries(new URLSearchParams(String(raw)));
    for (const k of ["blocks", "files", "metadata"]) if (typeof args[k] === "string") args[k] = JSON.parse(args[k]);
    const call: SlackCall = { method, args, token: auth, status: 200, at: Date.now() };
    calls.push(call);
    const failure = failures.find((f) => f.left > 0 && f.method === method && (!f.when || f.when(args)));
    if (failure) {
      failure.left--;
      switch (failure.kind) {
        case "hang":
          hung.push(res);
          return;
        case "apply_then_hang":
          if (auth === botToken) web(method, args);
          hung.push(res);
          return;
        case "rate_limited":
          call.status = 429;
          return reply(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(failure.retryAfterSeconds ?? 1) });
        case "error":
          return reply(res, 200, { ok: false, error: failure.error ?? "internal_error" });
      }
    }
    if (method === "apps.connections.open") {
      if (auth !== appToken) return reply(res, 200, { ok: false, error: "invalid_auth" });
      return reply(res, 200, { ok: true, url: `ws://127.0.0.1:${port}/socket?ticket=${randomBytes(4).toString("hex")}` });
    }
    if (auth !== botToken) return reply(res, 200, { ok: false, error: auth?.startsWith("xapp-") ? "not_allowed_token_type" : "invalid_auth" });
    reply(res, 200, web(method, args));
  }

  function web(method: string, a: Record<string, any>): Record<string, unknown> {
    switch (method) {
      case "auth.test":
        return { ok: true, url: "https://fake.slack.com/", team: "Fake", user: bot.name, team_id: teamId, user_id: bot.id, bot_id: "BFAKE" };
      case "chat.postMessage": {
        const channel = resolveChannel(String(a.channel));
        if (!channel) return { ok: false, error: "channel_not_found" };
        const ts = newTs();
        const metadata = a.metadata && typeof a.metadata.event_type === "string" ? { metadata: { event_type: String(a.metadata.event_type), event_payload: { ...(a.metadata.event_payload ?? {}) } } } : {};
        const m: FakeSlackMessage = { ts, channel, threadTs: a.thread_ts ? String(a.thread_ts) : undefined, user: bot.id, text: "", history: [], buttons: [], files: [], reactions: [], ...metadata };
        view(m, String(a.text ?? ""), a.blocks);
        messages.set(ts, m);
        return { ok: true, channel, ts, message: { text: a.text, ts } };
      }
      case "conversations.history":
      case "conversations.replies": {
        // What the bot's own messages look like in a listing; people's messages are not kept here.
        const channel = resolveChannel(String(a.channel));
        if (!channel) return { ok: false, error: "channel_not_found" };
        const withMetadata = a.include_all_metadata === true || a.include_all_metadata === "true";
        const limit = Math.min(Number(a.limit ?? 100) || 100, 999);
        const listed = (m: FakeSlackMessage) => ({ type: "message", user: m.user, bot_id: "BFAKE", text: m.text, ts: m.ts, ...(m.threadTs ? { thread_ts: m.threadTs } : {}), ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}) });
        const inChannel = [...messages.values()].filter((m) => m.channel === channel);
        if (method === "conversations.history") {
          const top = inChannel.filter((m) => m.threadTs === undefined || m.threadTs === m.ts).sort((x, y) => Number(y.ts) - Number(x.ts));
          return { ok: true, messages: top.slice(0, limit).map(listed), has_more: top.length > limit };
        }
        const thread = inChannel.filter((m) => m.ts === String(a.ts) || m.threadTs === String(a.ts)).sort((x, y) => Number(x.ts) - Number(y.ts));
        return { ok: true, messages: thread.slice(0, limit).map(listed), has_more: thread.length > limit };
      }
      case "chat.update": {
        const m = messages.get(String(a.ts));
        if (!m || m.channel !== resolveChannel(String(a.channel))) return { ok: false, error: "message_not_found" };
        view(m, String(a.text ?? ""), a.blocks);
        return { ok: true, channel: m.channel, ts: m.ts };
      }
      case "chat.delete": {
        const m = messages.get(String(a.ts));
        if (!m) return { ok: false, error: "message_not_found" };
        messages.delete(m.ts);
        deleted.push(m);
        return { ok: true };
      }
      case "chat.postEphemeral":
        ephemerals.push({ channel: String(a.channel), user: String(a.user), text: unescape(String(a.text ?? "")) });
        return { ok: true, message_ts: newTs() };
      case "reactions.add":
      case "reactions.remove": {
        const m = messages.get(String(a.timestamp));
        if (!m) return { ok: false, error: "message_not_found" };
        const name = String(a.name);
        if (method === "reactions.add") m.reactions.push(name);
        else m.reactions = m.reactions.filter((r) => r !== name);
        return { ok: true };
      }
      case "users.info": {
        const u = users.get(String(a.user));
        return u ? { ok: true, user: { id: u.id, name: u.name, real_name: u.name, profile: { display_name: u.name, real_name: u.name } } } : { ok: false, error: "user_not_found" };
      }
      case "conversations.info": {
        const c = channels.get(String(a.channel));
        return c ? { ok: true, channel: { id: a.channel, name: c.name, is_im: c.type === "im" } } : { ok: false, error: "channel_not_found" };
      }
      case "conversations.open": {
        const u = users.get(String(a.users));
        return u ? { ok: true, channel: { id: dmOf(u) } } : { ok: false, error: "user_not_found" };
      }
      case "files.getUploadURLExternal": {
        const id = newId("F");
        uploads.set(id, { name: String(a.filename), length: Number(a.length) });
        return { ok: true, upload_url: `http://127.0.0.1:${port}/upload/${id}`, file_id: id };
      }
      case "files.completeUploadExternal": {
        const channel = resolveChannel(String(a.channel_id));
        if (!channel) return { ok: false, error: "channel_not_found" };
        const files = (a.files as Array<{ id: string; title?: string }>).map((f) => ({ id: f.id, u: uploads.get(f.id) }));
        if (files.some((f) => !f.u?.bytes)) return { ok: false, error: "file_not_found" };
        const ts = newTs();
        const m: FakeSlackMessage = { ts, channel, threadTs: a.thread_ts ? String(a.thread_ts) : undefined, user: bot.id, text: unescape(String(a.initial_comment ?? "")), history: [], buttons: [], files: files.map((f) => ({ id: f.id, name: f.u!.name, bytes: f.u!.bytes! })), reactions: [] };
        m.history.push(m.text);
        messages.set(ts, m);
        return { ok: true, files: files.map((f) => ({ id: f.id, name: f.u!.name, shares: { private: { [channel]: [{ ts }] } } })) };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  function dmOf(u: FakeSlackUser): string {
    let id = dms.get(u.id);
    if (!id) {
      id = newId("D");
      dms.set(u.id, id);
      channels.set(id, { name: u.name, type: "im" });
    }
    return id;
  }

  /** A channel id, or a user id (Slack posts to the bot's DM with that user). */
  function resolveChannel(id: string): string | undefined {
    if (channels.has(id)) return id;
    const u = users.get(id);
    return u ? dmOf(u) : undefined;
  }

  const fake: FakeSlack = {
    apiUrl: `${origin}/api/`,
    botToken,
    appToken,
    bot,
    teamId,
    addUser(name) {
      const u = { id: newId("U"), name };
      users.set(u.id, u);
      return u;
    },
    dmChannel: dmOf,
    addChannel(name) {
      const id = newId("C");
      channels.set(id, { name, type: "channel" });
      return id;
    },
    postMessage(m) {
      const ts = newTs();
      const kind = channels.get(m.channel)!.type;
      const files = (m.files ?? []).map((f) => {
        const id = newId("F");
        const path = `/files-pri/${teamId}-${id}/${encodeURIComponent(f.name)}`;
        served.set(path, f.bytes);
        return { id, name: f.name, title: f.name, mimetype: f.mime, filetype: f.name.split(".").pop(), size: f.bytes.length, url_private: `${origin}${path}`, url_private_download: `${origin}${path}`, ...(f.subtype ? { subtype: f.subtype } : {}), ...(f.durationMs !== undefined ? { duration_ms: f.durationMs } : {}) };
      });
      const text = `${m.mention ? `<@${bot.id}> ` : ""}${m.text}`;
      const event = {
        type: "message",
        ...(files.length ? { subtype: "file_share", files } : {}),
        channel: m.channel,
        channel_type: kind,
        user: m.user.id,
        text,
        ts,
        event_ts: ts,
        ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
        team: teamId,
      };
      const eventId = newId("Ev");
      const envelopeId = enqueue("events_api", {
        token: "verification",
        team_id: teamId,
        api_app_id: "AFAKE",
        event,
        type: "event_callback",
        event_id: eventId,
        event_time: clock,
        authorizations: [{ enterprise_id: null, team_id: teamId, user_id: bot.id, is_bot: true, is_enterprise_install: false }],
        is_ext_shared_channel: false,
      });
      return { ts, eventId, envelopeId };
    },
    redeliver(envelopeId) {
      const known = sent.get(envelopeId);
      if (!known) throw new Error(`fake slack: no envelope ${envelopeId}`);
      pending.set(envelopeId, known);
      send(envelopeId, known, true);
      return envelopeId;
    },
    pressButton(ts, label, user) {
      const m = messages.get(ts);
      const b = m?.buttons.find((x) => x.label === label);
      if (!m || !b) throw new Error(`fake slack: no button "${label}" under ${ts}`);
      return enqueue("interactive", {
        type: "block_actions",
        user: { id: user.id, username: user.name, name: user.name, team_id: teamId },
        api_app_id: "AFAKE",
        token: "verification",
        container: { type: "message", message_ts: ts, channel_id: m.channel, is_ephemeral: false },
        trigger_id: `${clock}.trigger`,
        team: { id: teamId, domain: "fake" },
        channel: { id: m.channel, name: channels.get(m.channel)?.name ?? "" },
        message: { type: "message", user: bot.id, ts, text: m.text },
        response_url: `${origin}/response/${ts}`,
        actions: [{ action_id: b.actionId, block_id: "choices", text: { type: "plain_text", text: b.label }, value: b.value, type: "button", action_ts: `${clock}.000200` }],
      });
    },
    message: (ts) => messages.get(ts),
    botMessages: (channel) => [...messages.values()].filter((m) => m.user === bot.id && (channel === undefined || m.channel === channel)),
    deletedBotMessages: (channel) => deleted.filter((m) => channel === undefined || m.channel === channel),
    ephemerals,
    calls,
    acks,
    deliveries: (id) => sentCount.get(id) ?? 0,
    injectFailure(f) {
      failures.push({ ...f, left: f.times ?? 1 });
    },
    connected: () => socket?.readyState === WebSocket.OPEN,
    get connections() {
      return connections;
    },
    dropConnection() {
      dropped = true;
      socket?.terminate();
      socket = null;
    },
    restore() {
      dropped = false;
    },
    async waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs?: number): Promise<T> {
      const limit = e2eLimit(timeoutMs);
      const deadline = Date.now() + limit;
      for (;;) {
        const value = check();
        if (value !== undefined && value !== false) return value as T;
        if (Date.now() > deadline) throw new Error(`fake slack: timed out after ${limit} ms waiting for ${what}`);
        await sleep(10);
      }
    },
    async close() {
      clearInterval(pinger);
      for (const res of hung) res.destroy();
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/** The buttons of a message's `actions` blocks. */
function buttonsOf(blocks: unknown): FakeSlackButton[] {
  if (!Array.isArray(blocks)) return [];
  return blocks
    .filter((b) => b?.type === "actions")
    .flatMap((b) => (b.elements as any[]).filter((e) => e?.type === "button").map((e) => ({ label: String(e.text?.text ?? ""), actionId: String(e.action_id), value: String(e.value ?? "") })));
}
