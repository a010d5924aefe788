// A fake signal-cli JSON-RPC HTTP daemon (`signal-cli -a NUMBER daemon --http`), the network edge
// Hearth's Signal channel talks to: `GET /api/v1/events` (server-sent `receive` events) and
// `POST /api/v1/rpc` (JSON-RPC 2.0: send (and edit, with `editTimestamp`), sendTyping, sendReaction, remoteDelete, getAttachment,
// version). Every call is recorded. Like signal-cli with `--receive-mode on-connection`, messages
// wait (on "Signal's servers") while no event stream is open and each is handed to one stream
// once, never again. The daemon can be stopped and started again on the same port, and its
// event stream refused while RPC still works.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { waitFor } from "./daemon.ts";

export const BOT_NUMBER = "+4915100000000";

export interface FakeSignalCall {
  method: string;
  params: Record<string, any>;
  at: number;
}

/** A message the bot sent, as the chat shows it. */
export interface FakeSignalMessage {
  timestamp: number;
  /** The person's number, or the group id. */
  chatId: string;
  text: string;
  /** Every text it showed, the first one first (a `send` with `editTimestamp` edits it). */
  versions: string[];
  attachments: Array<{ name: string; mime: string; bytes: Uint8Array }>;
  quote?: { timestamp: number; author: string };
  deleted: boolean;
}

export interface IncomingSignalMessage {
  from: { number: string; name: string };
  groupId?: string;
  text?: string;
  /** In a group: the message mentions the bot (a mention mark at the start of the text). */
  mentionsBot?: boolean;
  quote?: { timestamp: number; author: string; text?: string };
  attachments?: Array<{ contentType: string; filename?: string; bytes: Uint8Array; voiceNote?: boolean }>;
  reaction?: { emoji: string; targetAuthor: string; targetTimestamp: number };
}

export interface FakeSignalCli {
  readonly url: string;
  readonly account: string;
  readonly calls: FakeSignalCall[];
  callsTo(method: string): FakeSignalCall[];
  /** Someone's message reaches the bot's account; resolves with its Signal timestamp. */
  receive(m: IncomingSignalMessage): number;
  /** Messages received but not yet handed to a stream. */
  pending(): number;
  /** The bot's messages in a chat (a number or a group id), oldest first; deleted ones included, marked. */
  messages(chatId: string): FakeSignalMessage[];
  /** Event streams opened so far. */
  readonly streamsOpened: number;
  /** An event stream is open now. */
  streaming(): boolean;
  /** The next `send` whose params `when` accepts is never answered; resolves once it arrived. */
  holdSend(when: (params: Record<string, any>) => boolean): Promise<void>;
  /** A `finishLink` is waiting for the phone to scan the code. */
  linkWaiting(): boolean;
  /** The phone scanned the code: the waiting `finishLink` answers with `number`, which becomes an account. */
  approveLink(number: string): void;
  /** Event streams are cut and refused (HTTP 503) until `resumeEvents`; RPC keeps working. */
  pauseEvents(): void;
  resumeEvents(): void;
  /** signal-cli stops: every connection is cut, nothing listens on the port. */
  stop(): Promise<void>;
  /** signal-cli runs again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

interface Envelope {
  timestamp: number;
  json: string;
}

/**
 * `multiAccount`: like `signal-cli daemon` without -a, it lists its accounts and can link a new
 * device (startLink, finishLink); else, like `-a NUMBER`, it serves one and has neither.
 */
export async function startFakeSignalCli(opts: { account?: string; multiAccount?: boolean; accounts?: string[] } = {}): Promise<FakeSignalCli> {
  const account = opts.account ?? BOT_NUMBER;
  const accounts = [...(opts.accounts ?? [])];
  let finishing: ((number: string) => void) | null = null;
  const calls: FakeSignalCall[] = [];
  const queue: Envelope[] = [];
  const sent: FakeSignalMessage[] = [];
  const files = new Map<string, Uint8Array>();
  const holds: Array<{ when: (p: Record<string, any>) => boolean; arrived: () => void }> = [];
  const sockets = new Set<Socket>();
  let streams: ServerResponse[] = [];
  let streamsOpened = 0;
  let paused = false;
  let clock = Date.now();
  let fileIds = 0;
  const nextTimestamp = () => (clock = Math.max(clock + 1, Date.now()));

  const flush = () => {
    const stream = streams.at(-1);
    if (!stream || paused) return;
    while (queue.length > 0) {
      const e = queue.shift()!;
      stream.write(`event:receive\ndata:${e.json}\n\n`);
    }
  };

  const cutStreams = () => {
    for (const s of streams) s.destroy();
    streams = [];
  };

  const rpc = (method: string, params: Record<string, any>, res: ServerResponse): { result?: unknown; error?: { code: number; message: string } } | "hang" => {
    if (!opts.multiAccount && ["listAccounts", "startLink", "finishLink"].includes(method)) return { error: { code: -32601, message: "Method not implemented" } };
    switch (method) {
      case "listAccounts":
        return { result: accounts.map((number) => ({ number })) };
      case "startLink":
        return { result: { deviceLinkUri: "sgnl://linkdevice?uuid=fake-uuid&pub_key=fake-key" } };
      case "finishLink":
        finishing = (number) => {
          accounts.push(number);
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", result: { number }, id: 0 }));
        };
        return "hang";
      case "version":
        return { result: { version: "0.13.22" } };
      case "send": {
        const hold = holds.findIndex((h) => h.when(params));
        if (hold >= 0) {
          holds.splice(hold, 1)[0]!.arrived();
          return "hang";
        }
        const chatId = params.groupId ?? [params.recipient].flat()[0];
        if (typeof chatId !== "string") return { error: { code: -32602, message: "No recipients given" } };
        const attachments = [params.attachments ?? params.attachment ?? []].flat().map((uri: string) => {
          const m = /^data:([^;,]*)(?:;filename=([^;,]*))?;base64,(.*)$/s.exec(uri);
          if (!m) throw new Error(`the fake takes attachments as data URIs, not ${uri.slice(0, 40)}`);
          return { mime: m[1]!, name: m[2] ?? "file", bytes: new Uint8Array(Buffer.from(m[3]!, "base64")) };
        });
        const timestamp = nextTimestamp();
        if (params.editTimestamp !== undefined) {
          const edited = sent.find((x) => x.chatId === chatId && x.timestamp === Number(params.editTimestamp) && !x.deleted);
          if (!edited) return { error: { code: -1, message: "Failed to send message: target message not found" } };
          edited.text = String(params.message ?? "");
          edited.versions.push(edited.text);
          return { result: { timestamp, results: [{ recipientAddress: { number: chatId }, type: "SUCCESS" }] } };
        }
        sent.push({
          timestamp,
          chatId,
          text: String(params.message ?? ""),
          versions: [String(params.message ?? "")],
          attachments,
          ...(params.quoteTimestamp ? { quote: { timestamp: Number(params.quoteTimestamp), author: String(params.quoteAuthor) } } : {}),
          deleted: false,
        });
        return { result: { timestamp, results: [{ recipientAddress: { number: chatId }, type: "SUCCESS" }] } };
      }
      case "sendTyping":
      case "sendReaction":
        return { result: { timestamp: nextTimestamp(), results: [] } };
      case "remoteDelete": {
        const m = sent.find((s) => s.timestamp === Number(params.targetTimestamp));
        if (m) m.deleted = true;
        return { result: { timestamp: nextTimestamp(), results: [] } };
      }
      case "getAttachment": {
        const bytes = files.get(String(params.id));
        return bytes ? { result: { data: Buffer.from(bytes).toString("base64") } } : { error: { code: -1, message: `Could not find attachment with ID: ${params.id}` } };
      }
      default:
        return { error: { code: -32601, message: `Method not implemented: ${method}` } };
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/api/v1/events" && req.method === "GET") {
      if (paused) return void res.writeHead(503).end();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      streams.push(res);
      streamsOpened++;
      res.on("close", () => (streams = streams.filter((s) => s !== res)));
      flush();
      return;
    }
    if (path === "/api/v1/check") return void res.writeHead(200).end();
    if (path !== "/api/v1/rpc" || req.method !== "POST") return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: { id?: unknown; method?: string; params?: Record<string, any> };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }));
      }
      const method = String(body.method ?? "");
      const params = body.params ?? {};
      calls.push({ method, params, at: Date.now() });
      const answer = rpc(method, params, res);
      if (answer === "hang") return;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", ...answer, id: body.id ?? null }));
    });
  };

  let server: Server;
  let port = 0;
  const listen = async () => {
    server = createServer(handle);
    server.on("connection", (s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  };
  const halt = async () => {
    cutStreams();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen();

  return {
    url: `http://127.0.0.1:${port}`,
    account,
    calls,
    callsTo: (method) => calls.filter((c) => c.method === method),
    receive(m) {
      const timestamp = nextTimestamp();
      const mention = m.mentionsBot ? "\uFFFC " : "";
      const attachments = (m.attachments ?? []).map((a) => {
        const id = `att${++fileIds}.${a.contentType.split("/")[1] ?? "bin"}`;
        files.set(id, a.bytes);
        return { contentType: a.contentType, filename: a.filename ?? null, id, size: a.bytes.byteLength, ...(a.voiceNote ? { voiceNote: true } : {}) };
      });
      const dataMessage = {
        timestamp,
        message: m.text === undefined && !mention ? null : `${mention}${m.text ?? ""}`,
        expiresInSeconds: 0,
        viewOnce: false,
        ...(m.mentionsBot ? { mentions: [{ name: account, number: account, uuid: "00000000-0000-4000-8000-000000000001", start: 0, length: 1 }] } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(m.quote ? { quote: { id: m.quote.timestamp, author: m.quote.author, authorNumber: m.quote.author, authorUuid: null, text: m.quote.text ?? "", attachments: [] } } : {}),
        ...(m.reaction ? { reaction: { emoji: m.reaction.emoji, targetAuthor: m.reaction.targetAuthor, targetAuthorNumber: m.reaction.targetAuthor, targetSentTimestamp: m.reaction.targetTimestamp, isRemove: false } } : {}),
        ...(m.groupId ? { groupInfo: { groupId: m.groupId, groupName: "Family", revision: 1, type: "DELIVER" } } : {}),
      };
      const envelope = { source: m.from.number, sourceNumber: m.from.number, sourceUuid: null, sourceName: m.from.name, sourceDevice: 1, timestamp, serverReceivedTimestamp: timestamp, serverDeliveredTimestamp: timestamp, dataMessage };
      queue.push({ timestamp, json: JSON.stringify({ envelope, account }) });
      flush();
      return timestamp;
    },
    pending: () => queue.length,
    messages: (chatId) => sent.filter((s) => s.chatId === chatId),
    get streamsOpened() {
      return streamsOpened;
    },
    streaming: () => streams.length > 0,
    async holdSend(when) {
      let arrived!: () => void;
      const held = new Promise<void>((resolve) => (arrived = resolve));
      holds.push({ when, arrived });
      await held;
    },
    linkWaiting: () => finishing !== null,
    approveLink(number) {
      const finish = finishing;
      finishing = null;
      if (!finish) throw new Error("no finishLink is waiting");
      finish(number);
    },
    pauseEvents() {
      paused = true;
      cutStreams();
    },
    resumeEvents() {
      paused = false;
    },
    stop: halt,
    restart: listen,
    close: halt,
  };
}

/** Waits until the bot's event stream is open (a new one, when `after` streams were opened before). */
export function streamOpened(signal: FakeSignalCli, after: number): Promise<void> {
  return waitFor("signal-cli's event stream to be open", () => signal.streamsOpened > after && signal.streaming());
}
