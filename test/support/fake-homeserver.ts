// A fake Matrix homeserver at the network edge: the client-server endpoints matrix-js-sdk uses
// (versions, login and whoami, filters and push rules, /sync long-polls with `since` tokens,
// rooms: create, join, leave, invite, send, redact, state, members, typing; profiles; media
// upload and the authenticated download; and for end-to-end encryption keys/upload, keys/query,
// keys/claim and sendToDevice). Every event, to-device message and device-key change is one
// entry of a global stream; a sync token is a position in it. Every request is recorded with its
// raw body, so a test can say what the server saw (never plaintext in an encrypted room).
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export const SERVER_NAME = "fake.test";

export interface FakeUser {
  userId: string;
  displayName: string;
  accessToken: string;
  deviceId: string;
}

export interface MatrixEvent {
  event_id: string;
  room_id: string;
  sender: string;
  type: string;
  content: Record<string, any>;
  state_key?: string;
  origin_server_ts: number;
  unsigned?: Record<string, unknown>;
  redacted?: boolean;
}

interface Room {
  id: string;
  events: MatrixEvent[];
  state: Map<string, MatrixEvent>;
}

type Entry =
  | { kind: "event"; pos: number; roomId: string; event: MatrixEvent }
  | { kind: "to_device"; pos: number; userId: string; deviceId: string; event: { type: string; sender: string; content: unknown } }
  | { kind: "device_change"; pos: number; userId: string }
  | { kind: "account_data"; pos: number; userId: string; type: string; content: unknown };

export interface RecordedRequest {
  method: string;
  path: string;
  userId: string | undefined;
  body: string;
  /** The body's bytes (a media upload's are binary). */
  raw: Buffer;
  at: number;
}

/** A fault: the next matching request is answered by `reply` instead ("hang": never answered; "apply_then_hang": done, never answered). */
export interface Injected {
  method: string;
  path: RegExp;
  when?(body: any): boolean;
  reply: "hang" | "apply_then_hang" | { status: number; body: unknown; headers?: Record<string, string> };
  times?: number;
}

export interface FakeHomeserver {
  readonly url: string;
  readonly requests: RecordedRequest[];
  addUser(localpart: string, displayName?: string): FakeUser;
  user(userId: string): FakeUser;
  createRoom(creator: FakeUser, opts?: { name?: string; invite?: string[]; isDirect?: boolean }): string;
  join(user: FakeUser, roomId: string): void;
  leave(user: FakeUser, roomId: string): void;
  invite(inviter: FakeUser, roomId: string, userId: string): void;
  sendEvent(user: FakeUser, roomId: string, type: string, content: Record<string, any>): MatrixEvent;
  addMedia(bytes: Uint8Array, mime: string, name: string): string;
  media(mxc: string): { bytes: Uint8Array; mime: string; name: string } | undefined;
  events(roomId: string): MatrixEvent[];
  membership(roomId: string, userId: string): string | undefined;
  /** Syncs started with this user's token (a test waits for a new one after a start). */
  syncCount(userId: string): number;
  inject(f: Injected): void;
  /** /sync and /versions fail (the connection drops) until `restore`. */
  loseConnection(): void;
  restore(): void;
  waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startFakeHomeserver(): Promise<FakeHomeserver> {
  const users = new Map<string, FakeUser>();
  const byToken = new Map<string, FakeUser>();
  const rooms = new Map<string, Room>();
  const stream: Entry[] = [];
  const media = new Map<string, { bytes: Uint8Array; mime: string; name: string }>();
  const deviceKeys = new Map<string, Map<string, unknown>>();
  const oneTimeKeys = new Map<string, Map<string, Record<string, unknown>>>();
  const fallbackKeys = new Map<string, Record<string, unknown>>();
  const crossSigning = new Map<string, Record<string, unknown>>();
  const accountData = new Map<string, Map<string, unknown>>();
  const txns = new Map<string, string>();
  const filters: unknown[] = [];
  const syncs = new Map<string, number>();
  const requests: RecordedRequest[] = [];
  const faults: Injected[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const openSyncs = new Set<ServerResponse>();
  let lost = false;
  let seq = 0;
  const nextId = () => `${++seq}${randomBytes(3).toString("hex")}`;

  const wake = () => {
    for (const w of [...waiters]) w();
  };
  type Unplaced = Entry extends infer E ? (E extends Entry ? Omit<E, "pos"> : never) : never;
  const append = (e: Unplaced): number => {
    const pos = stream.length + 1;
    stream.push({ ...e, pos } as Entry);
    wake();
    return pos;
  };

  const addUser = (localpart: string, displayName = localpart): FakeUser => {
    const u: FakeUser = { userId: `@${localpart}:${SERVER_NAME}`, displayName, accessToken: `tok_${localpart}_${randomBytes(8).toString("hex")}`, deviceId: `DEV${localpart.toUpperCase()}` };
    users.set(u.userId, u);
    byToken.set(u.accessToken, u);
    return u;
  };

  const membership = (roomId: string, userId: string): string | undefined => rooms.get(roomId)?.state.get(`m.room.member\0${userId}`)?.content.membership;

  const addEvent = (roomId: string, sender: string, type: string, content: Record<string, any>, stateKey?: string): MatrixEvent => {
    const room = rooms.get(roomId);
    if (!room) throw new Error(`no room ${roomId}`);
    const event: MatrixEvent = { event_id: `$${nextId()}`, room_id: roomId, sender, type, content, origin_server_ts: Date.now(), unsigned: {}, ...(stateKey !== undefined ? { state_key: stateKey } : {}) };
    room.events.push(event);
    if (stateKey !== undefined) room.state.set(`${type}\0${stateKey}`, event);
    append({ kind: "event", roomId, event });
    return event;
  };

  const setMembership = (roomId: string, sender: string, target: string, membership: string, extra: Record<string, unknown> = {}) => {
    const u = users.get(target);
    addEvent(roomId, sender, "m.room.member", { membership, ...(u && membership === "join" ? { displayname: u.displayName } : {}), ...extra }, target);
    // A user joining a room is a device-list change for everyone in it.
    if (membership === "join") append({ kind: "device_change", userId: target });
  };

  const createRoom = (creator: FakeUser, opts: { name?: string; invite?: string[]; isDirect?: boolean; encrypted?: boolean; initialState?: Array<{ type: string; state_key?: string; content: Record<string, any> }> } = {}): string => {
    const id = `!${nextId()}:${SERVER_NAME}`;
    rooms.set(id, { id, events: [], state: new Map() });
    addEvent(id, creator.userId, "m.room.create", { creator: creator.userId, room_version: "10" }, "");
    setMembership(id, creator.userId, creator.userId, "join");
    addEvent(id, creator.userId, "m.room.power_levels", { users: { [creator.userId]: 100 }, users_default: 0, events_default: 0, state_default: 50 }, "");
    addEvent(id, creator.userId, "m.room.join_rules", { join_rule: "invite" }, "");
    addEvent(id, creator.userId, "m.room.history_visibility", { history_visibility: "shared" }, "");
    if (opts.name) addEvent(id, creator.userId, "m.room.name", { name: opts.name }, "");
    for (const s of opts.initialState ?? []) addEvent(id, creator.userId, s.type, s.content, s.state_key ?? "");
    for (const invitee of opts.invite ?? []) setMembership(id, creator.userId, invitee, "invite", opts.isDirect ? { is_direct: true } : {});
    return id;
  };

  // ── sync ──────────────────────────────────────────────────────────────────────────────────

  const stripped = (e: MatrixEvent) => ({ type: e.type, state_key: e.state_key, content: e.content, sender: e.sender });

  const clientEvent = (e: MatrixEvent) => {
    const { room_id: _r, redacted: _d, ...rest } = e;
    return rest;
  };

  /** What `user` (on `deviceId`) gets for the stream after `since`; null when nothing. */
  const syncBody = (user: FakeUser, since: number) => {
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    const leave: Record<string, unknown> = {};
    let any = false;
    for (const room of rooms.values()) {
      const mine = membership(room.id, user.userId);
      const newer = stream.filter((s): s is Extract<Entry, { kind: "event" }> => s.kind === "event" && s.roomId === room.id && s.pos > since);
      if (newer.length === 0) continue;
      const myChange = newer.some((s) => s.event.type === "m.room.member" && s.event.state_key === user.userId);
      if (mine === "join") {
        // A room joined since `since` comes with its whole timeline (its state from the start).
        const joinedNow = newer.some((s) => s.event.type === "m.room.member" && s.event.state_key === user.userId && s.event.content.membership === "join");
        const events = joinedNow ? room.events : newer.map((s) => s.event);
        join[room.id] = {
          timeline: { events: events.map(clientEvent), limited: false, prev_batch: `p${since}` },
          state: { events: [] },
          ephemeral: { events: [] },
          account_data: { events: [] },
          unread_notifications: {},
        };
        any = true;
      } else if (mine === "invite" && myChange) {
        invite[room.id] = { invite_state: { events: [...room.state.values()].filter((e) => e.type !== "m.room.member" || e.state_key === user.userId || e.state_key === e.sender).map(stripped) } };
        any = true;
      } else if ((mine === "leave" || mine === "ban") && myChange) {
        leave[room.id] = { timeline: { events: newer.map((s) => clientEvent(s.event)), limited: false }, state: { events: [] } };
        any = true;
      }
    }
    const toDevice = stream.filter((s): s is Extract<Entry, { kind: "to_device" }> => s.kind === "to_device" && s.pos > since && s.userId === user.userId && (s.deviceId === user.deviceId || s.deviceId === "*")).map((s) => s.event);
    const shares = (other: string) => other === user.userId || [...rooms.values()].some((r) => membership(r.id, user.userId) === "join" && membership(r.id, other) === "join");
    const changed = [...new Set(stream.filter((s): s is Extract<Entry, { kind: "device_change" }> => s.kind === "device_change" && s.pos > since && shares(s.userId)).map((s) => s.userId))];
    const account = stream.filter((s): s is Extract<Entry, { kind: "account_data" }> => s.kind === "account_data" && s.pos > since && s.userId === user.userId).map((s) => ({ type: s.type, content: s.content }));
    if (toDevice.length > 0 || changed.length > 0 || account.length > 0) any = true;
    const otks = oneTimeKeys.get(`${user.userId}\0${user.deviceId}`);
    return {
      any,
      body: {
        next_batch: `s${stream.length}`,
        rooms: { join, invite, leave },
        to_device: { events: toDevice },
        device_lists: { changed, left: [] },
        device_one_time_keys_count: { signed_curve25519: otks?.size ?? 0 },
        device_unused_fallback_key_types: fallbackKeys.has(`${user.userId}\0${user.deviceId}`) ? ["signed_curve25519"] : [],
        account_data: { events: account },
        presence: { events: [] },
      },
    };
  };

  const sync = async (user: FakeUser, url: URL, res: ServerResponse) => {
    syncs.set(user.userId, (syncs.get(user.userId) ?? 0) + 1);
    const sinceParam = url.searchParams.get("since");
    const since = sinceParam ? Number(sinceParam.slice(1)) : 0;
    const timeout = Math.min(Number(url.searchParams.get("timeout") ?? 0), 30_000);
    const until = Date.now() + timeout;
    openSyncs.add(res);
    res.on("close", () => openSyncs.delete(res));
    for (;;) {
      if (res.destroyed) return;
      const r = syncBody(user, since);
      if (r.any || Date.now() >= until) return json(res, 200, r.body);
      await new Promise<void>((resolve) => {
        const done = () => {
          waiters.delete(done);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, until - Date.now()));
        waiters.add(done);
        res.once("close", done);
      });
    }
  };

  // ── keys ──────────────────────────────────────────────────────────────────────────────────

  const keysUpload = (user: FakeUser, body: any) => {
    const key = `${user.userId}\0${user.deviceId}`;
    if (body.device_keys) {
      let devices = deviceKeys.get(user.userId);
      if (!devices) deviceKeys.set(user.userId, (devices = new Map()));
      devices.set(user.deviceId, body.device_keys);
      append({ kind: "device_change", userId: user.userId });
    }
    let otks = oneTimeKeys.get(key);
    if (!otks) oneTimeKeys.set(key, (otks = new Map()));
    for (const [id, k] of Object.entries(body.one_time_keys ?? {})) otks.set(id, { [id]: k });
    if (body.fallback_keys && Object.keys(body.fallback_keys).length > 0) fallbackKeys.set(key, body.fallback_keys);
    return { one_time_key_counts: { signed_curve25519: otks.size } };
  };

  const keysQuery = (body: any) => {
    const out: Record<string, Record<string, unknown>> = {};
    const master: Record<string, unknown> = {};
    const selfSigning: Record<string, unknown> = {};
    const userSigning: Record<string, unknown> = {};
    for (const userId of Object.keys(body.device_keys ?? {})) {
      out[userId] = Object.fromEntries(deviceKeys.get(userId) ?? []);
      const cs = crossSigning.get(userId);
      if (cs?.master_key) master[userId] = cs.master_key;
      if (cs?.self_signing_key) selfSigning[userId] = cs.self_signing_key;
      if (cs?.user_signing_key) userSigning[userId] = cs.user_signing_key;
    }
    return { device_keys: out, master_keys: master, self_signing_keys: selfSigning, user_signing_keys: userSigning, failures: {} };
  };

  const keysClaim = (body: any) => {
    const out: Record<string, Record<string, unknown>> = {};
    for (const [userId, devices] of Object.entries<Record<string, string>>(body.one_time_keys ?? {})) {
      for (const deviceId of Object.keys(devices)) {
        const key = `${userId}\0${deviceId}`;
        const otks = oneTimeKeys.get(key);
        const first = otks ? [...otks.entries()][0] : undefined;
        let claimed: Record<string, unknown> | undefined;
        if (first) {
          otks!.delete(first[0]);
          claimed = first[1];
        } else if (fallbackKeys.has(key)) claimed = fallbackKeys.get(key);
        if (claimed) (out[userId] ??= {})[deviceId] = claimed;
      }
    }
    return { one_time_keys: out, failures: {} };
  };

  // ── HTTP ──────────────────────────────────────────────────────────────────────────────────

  /** Requests done whose answer is never sent (a fault's "apply_then_hang"). */
  const unanswered = new WeakSet<ServerResponse>();
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed || res.headersSent || unanswered.has(res)) return;
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse, errcode = "M_NOT_FOUND") => json(res, 404, { errcode, error: "not found" });
  const forbidden = (res: ServerResponse, error: string) => json(res, 403, { errcode: "M_FORBIDDEN", error });

  const readBody = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => resolve(Buffer.concat(parts)));
      req.on("error", reject);
    });

  const C = "/_matrix/client/(?:v3|r0|v1|unstable)";
  const route = (method: string, pattern: string) => ({ method, re: new RegExp(`^${pattern.replace(/\{C\}/g, C)}$`) });
  const R = {
    versions: route("GET", "/_matrix/client/versions"),
    login: route("POST", "{C}/login"),
    whoami: route("GET", "{C}/account/whoami"),
    sync: route("GET", "{C}/sync"),
    filterPost: route("POST", "{C}/user/([^/]+)/filter"),
    filterGet: route("GET", "{C}/user/([^/]+)/filter/([^/]+)"),
    pushrules: route("GET", "{C}/pushrules/?"),
    capabilities: route("GET", "{C}/capabilities"),
    createRoom: route("POST", "{C}/createRoom"),
    joinById: route("POST", "{C}/(?:rooms/([^/]+)/join|join/([^/]+))"),
    leave: route("POST", "{C}/rooms/([^/]+)/leave"),
    invite: route("POST", "{C}/rooms/([^/]+)/invite"),
    send: route("PUT", "{C}/rooms/([^/]+)/send/([^/]+)/([^/]+)"),
    redact: route("PUT", "{C}/rooms/([^/]+)/redact/([^/]+)/([^/]+)"),
    stateGet: route("GET", "{C}/rooms/([^/]+)/state/([^/]+)(?:/([^/]*))?"),
    statePut: route("PUT", "{C}/rooms/([^/]+)/state/([^/]+)(?:/([^/]*))?"),
    members: route("GET", "{C}/rooms/([^/]+)/(?:members|joined_members)"),
    typing: route("PUT", "{C}/rooms/([^/]+)/typing/([^/]+)"),
    receipt: route("POST", "{C}/rooms/([^/]+)/(?:receipt|read_markers).*"),
    profile: route("GET", "{C}/profile/([^/]+)(?:/(displayname|avatar_url))?"),
    accountDataPut: route("PUT", "{C}/user/([^/]+)/account_data/([^/]+)"),
    accountDataGet: route("GET", "{C}/user/([^/]+)/account_data/([^/]+)"),
    upload: route("POST", "/_matrix/media/(?:v3|r0)/upload"),
    download: route("GET", "/_matrix/client/v1/media/download/([^/]+)/([^/]+)(?:/[^/]*)?"),
    mediaConfig: route("GET", "/_matrix/(?:client/v1|media/v3)/media/config|/_matrix/media/v3/config"),
    keysUpload: route("POST", "{C}/keys/upload"),
    keysQuery: route("POST", "{C}/keys/query"),
    keysClaim: route("POST", "{C}/keys/claim"),
    keysChanges: route("GET", "{C}/keys/changes"),
    signingUpload: route("POST", "{C}/keys/device_signing/upload"),
    signaturesUpload: route("POST", "{C}/keys/signatures/upload"),
    toDevice: route("PUT", "{C}/sendToDevice/([^/]+)/([^/]+)"),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const text = raw.toString("utf8");
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "") || url.searchParams.get("access_token") || "";
    const user = byToken.get(token);
    const path = decodeURIComponent(url.pathname);
    requests.push({ method, path, userId: user?.userId, body: text, raw, at: Date.now() });
    let body: any = {};
    try {
      body = text && (req.headers["content-type"] ?? "").includes("json") ? JSON.parse(text) : {};
    } catch {
      return json(res, 400, { errcode: "M_NOT_JSON", error: "bad json" });
    }
    if (lost && (R.sync.re.test(url.pathname) || R.versions.re.test(url.pathname))) return void req.socket.destroy();
    const fault = faults.find((f) => f.method === method && f.path.test(path) && (!f.when || f.when(body)));
    if (fault) {
      if (fault.times !== undefined && --fault.times <= 0) faults.splice(faults.indexOf(fault), 1);
      else if (fault.times === undefined) faults.splice(faults.indexOf(fault), 1);
      if (fault.reply === "hang") return;
      if (fault.reply === "apply_then_hang") unanswered.add(res);
      else return json(res, fault.reply.status, fault.reply.body, fault.reply.headers);
    }
    const m = (r: { method: string; re: RegExp }) => (method === r.method ? r.re.exec(url.pathname) : null);
    let g: RegExpExecArray | null;
    if (m(R.versions)) return json(res, 200, { versions: ["v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.7", "v1.8", "v1.9", "v1.10", "v1.11", "v1.12"], unstable_features: {} });
    if (m(R.login)) {
      const who = users.get(body.identifier?.user?.startsWith("@") ? body.identifier.user : `@${body.identifier?.user ?? body.user}:${SERVER_NAME}`);
      if (!who || body.password !== "secret") return forbidden(res, "Invalid username or password");
      return json(res, 200, { user_id: who.userId, access_token: who.accessToken, device_id: who.deviceId, home_server: SERVER_NAME });
    }
    if (m(R.mediaConfig)) return json(res, 200, { "m.upload.size": 50 * 1024 * 1024 });
    if (!user) return json(res, 401, { errcode: "M_UNKNOWN_TOKEN", error: "Invalid access token passed.", soft_logout: false });
    const roomOf = (id: string | undefined) => (id ? rooms.get(decodeURIComponent(id)) : undefined);
    if (m(R.whoami)) return json(res, 200, { user_id: user.userId, device_id: user.deviceId, is_guest: false });
    if (m(R.sync)) return sync(user, url, res);
    if (m(R.filterPost)) {
      filters.push(body);
      return json(res, 200, { filter_id: String(filters.length - 1) });
    }
    if ((g = m(R.filterGet))) return filters[Number(g[2])] ? json(res, 200, filters[Number(g[2])]) : notFound(res);
    if (m(R.pushrules)) return json(res, 200, { global: { override: [], content: [], room: [], sender: [], underride: [] } });
    if (m(R.capabilities)) return json(res, 200, { capabilities: {} });
    if (m(R.createRoom)) {
      const id = createRoom(user, { name: body.name, invite: body.invite ?? [], isDirect: body.is_direct === true, initialState: body.initial_state ?? [] });
      return json(res, 200, { room_id: id });
    }
    if ((g = m(R.joinById))) {
      const room = roomOf(g[1] ?? g[2]);
      if (!room) return notFound(res);
      const now = membership(room.id, user.userId);
      if (now !== "invite" && now !== "join") return forbidden(res, "You are not invited to this room.");
      if (now !== "join") setMembership(room.id, user.userId, user.userId, "join");
      return json(res, 200, { room_id: room.id });
    }
    if ((g = m(R.leave))) {
      const room = roomOf(g[1]);
      if (!room) return notFound(res);
      setMembership(room.id, user.userId, user.userId, "leave");
      return json(res, 200, {});
    }
    if ((g = m(R.invite))) {
      const room = roomOf(g[1]);
      if (!room || membership(room.id, user.userId) !== "join") return forbidden(res, "not in the room");
      setMembership(room.id, user.userId, body.user_id, "invite");
      return json(res, 200, {});
    }
    if ((g = m(R.send))) {
      const room = roomOf(g[1]);
      if (!room || membership(room.id, user.userId) !== "join") return forbidden(res, "not in the room");
      const txn = `${user.accessToken}\0${g[3]}`;
      const known = txns.get(txn);
      if (known) return json(res, 200, { event_id: known });
      const e = addEvent(room.id, user.userId, decodeURIComponent(g[2]!), body);
      txns.set(txn, e.event_id);
      return json(res, 200, { event_id: e.event_id });
    }
    if ((g = m(R.redact))) {
      const room = roomOf(g[1]);
      const target = room?.events.find((e) => e.event_id === decodeURIComponent(g![2]!));
      if (!room || !target) return notFound(res);
      const txn = `${user.accessToken}\0redact\0${g[3]}`;
      const known = txns.get(txn);
      if (known) return json(res, 200, { event_id: known });
      target.redacted = true;
      const e = addEvent(room.id, user.userId, "m.room.redaction", { redacts: target.event_id, ...(body.reason ? { reason: body.reason } : {}) });
      (e as MatrixEvent & { redacts?: string }).redacts = target.event_id;
      txns.set(txn, e.event_id);
      return json(res, 200, { event_id: e.event_id });
    }
    if ((g = m(R.stateGet))) {
      const room = roomOf(g[1]);
      const e = room?.state.get(`${decodeURIComponent(g[2]!)}\0${decodeURIComponent(g[3] ?? "")}`);
      return e ? json(res, 200, e.content) : notFound(res);
    }
    if ((g = m(R.statePut))) {
      const room = roomOf(g[1]);
      if (!room) return notFound(res);
      const e = addEvent(room.id, user.userId, decodeURIComponent(g[2]!), body, decodeURIComponent(g[3] ?? ""));
      return json(res, 200, { event_id: e.event_id });
    }
    if ((g = m(R.members))) {
      const room = roomOf(g[1]);
      if (!room) return notFound(res);
      const chunk = [...room.state.values()].filter((e) => e.type === "m.room.member").map(clientEvent);
      if (url.pathname.endsWith("joined_members")) return json(res, 200, { joined: Object.fromEntries(chunk.filter((e) => e.content.membership === "join").map((e) => [e.state_key, { display_name: e.content.displayname ?? null }])) });
      return json(res, 200, { chunk });
    }
    if (m(R.typing) || m(R.receipt)) return json(res, 200, {});
    if ((g = m(R.profile))) {
      const who = users.get(decodeURIComponent(g[1]!));
      if (!who) return notFound(res);
      return json(res, 200, g[2] === "avatar_url" ? {} : { displayname: who.displayName });
    }
    if ((g = m(R.accountDataPut))) {
      const type = decodeURIComponent(g[2]!);
      let mine = accountData.get(user.userId);
      if (!mine) accountData.set(user.userId, (mine = new Map()));
      mine.set(type, body);
      append({ kind: "account_data", userId: user.userId, type, content: body });
      return json(res, 200, {});
    }
    if ((g = m(R.accountDataGet))) {
      const found = accountData.get(user.userId)?.get(decodeURIComponent(g[2]!));
      return found ? json(res, 200, found) : notFound(res);
    }
    if (m(R.upload)) {
      const id = nextId();
      media.set(id, { bytes: new Uint8Array(raw), mime: String(req.headers["content-type"] ?? "application/octet-stream"), name: url.searchParams.get("filename") ?? "file" });
      return json(res, 200, { content_uri: `mxc://${SERVER_NAME}/${id}` });
    }
    if ((g = m(R.download))) {
      const found = g[1] === SERVER_NAME ? media.get(g[2]!) : undefined;
      if (!found) return notFound(res);
      res.writeHead(200, { "content-type": found.mime, "content-length": String(found.bytes.byteLength) });
      return void res.end(Buffer.from(found.bytes));
    }
    if (m(R.keysUpload)) return json(res, 200, keysUpload(user, body));
    if (m(R.keysQuery)) return json(res, 200, keysQuery(body));
    if (m(R.keysClaim)) return json(res, 200, keysClaim(body));
    if (m(R.keysChanges)) return json(res, 200, { changed: [], left: [] });
    if (m(R.signingUpload)) {
      crossSigning.set(user.userId, { ...crossSigning.get(user.userId), ...body });
      append({ kind: "device_change", userId: user.userId });
      return json(res, 200, {});
    }
    if (m(R.signaturesUpload)) return json(res, 200, { failures: {} });
    if ((g = m(R.toDevice))) {
      const type = decodeURIComponent(g[1]!);
      const txn = `${user.accessToken}\0todevice\0${g[2]}`;
      if (txns.has(txn)) return json(res, 200, {});
      txns.set(txn, "sent");
      for (const [userId, devices] of Object.entries<Record<string, unknown>>(body.messages ?? {})) {
        for (const [deviceId, content] of Object.entries(devices)) append({ kind: "to_device", userId, deviceId, event: { type, sender: user.userId, content } });
      }
      return json(res, 200, {});
    }
    return notFound(res, "M_UNRECOGNIZED");
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => json(res, 500, { errcode: "M_UNKNOWN", error: String(err) }));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    addUser,
    user: (id) => users.get(id)!,
    createRoom: (creator, opts) => createRoom(creator, opts),
    join: (u, roomId) => setMembership(roomId, u.userId, u.userId, "join"),
    leave: (u, roomId) => setMembership(roomId, u.userId, u.userId, "leave"),
    invite: (inviter, roomId, userId) => setMembership(roomId, inviter.userId, userId, "invite"),
    sendEvent: (u, roomId, type, content) => addEvent(roomId, u.userId, type, content),
    addMedia(bytes, mime, name) {
      const id = nextId();
      media.set(id, { bytes, mime, name });
      return `mxc://${SERVER_NAME}/${id}`;
    },
    media: (mxc) => media.get(mxc.replace(`mxc://${SERVER_NAME}/`, "")),
    events: (roomId) => rooms.get(roomId)?.events ?? [],
    membership,
    syncCount: (userId) => syncs.get(userId) ?? 0,
    inject: (f) => void faults.push(f),
    loseConnection() {
      lost = true;
      for (const res of openSyncs) res.socket?.destroy();
    },
    restore() {
      lost = false;
    },
    async waitFor(what, check, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const v = check();
        if (v !== undefined && v !== false) return v;
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await sleep(20);
      }
    },
    async close() {
      wake();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
