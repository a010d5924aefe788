// Talking to a gateway from the CLI: over the daemon's control socket, or in-process to an
// embedded gateway when no daemon runs. Both speak the same events.
import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import type { CliEvent, KeptLetter } from "../channels/terminal/channel.ts";
import type { ClientRequest, ServerEvent } from "../gateway/control/protocol.ts";
import { lineDecoder } from "../gateway/control/protocol.ts";
import type { Gateway } from "../gateway/gateway.ts";
import type { GatewayStatus } from "../gateway/status.ts";

export type ChatEnd = Extract<CliEvent, { type: "final" | "failed" }>;
export type QuestionEvent = Extract<CliEvent, { type: "question" | "question_settled" }>;

export interface GatewayClient {
  readonly kind: "daemon" | "embedded";
  /** Sends one message; its events go to `onEvent`; resolves with the final (or failed) event. */
  /** `files`: absolute paths of local files to attach. */
  chat(text: string, onEvent: (e: CliEvent) => void, files?: string[]): Promise<ChatEnd>;
  /** Stops the main session's active run (Ctrl+C). */
  abort(): void;
  status(): Promise<GatewayStatus>;
  rpc(method: string, params?: unknown): Promise<unknown>;
  /** Proactive messages (cron, heartbeat) while connected; only after `listen`. */
  onNotice(fn: (text: string) => void): void;
  /**
   * Asks for proactive messages from now on (an interactive chat); resolves with what waited in
   * the terminal's mailbox, which the gateway then forgets (each is handed out once).
   */
  listen(): Promise<KeptLetter[]>;
  /** Questions (approvals) and their outcomes while connected; only after `listen`. */
  onQuestion(fn: (e: QuestionEvent) => void): void;
  /** Answers question `key` with choice `choiceId`. */
  choose(key: string, choiceId: string): void;
  /**
   * A client that reconnects (daemon-link.ts; an interactive chat): told the moment the daemon
   * goes away and when it answers again. Absent on the others, which end with the connection.
   */
  onLink?(fn: (e: LinkEvent) => void): void;
  /**
   * Messages typed while the daemon was away, not sent yet: each one's `chat` rejects with
   * NotSentError. Returns their texts, oldest first ([] when none wait).
   */
  dropUnsent?(): string[];
  close(): Promise<void>;
}

/** `lost`: the connection ended; `answers`: how many messages it had taken whose answers come after it is back. */
export type LinkEvent = { type: "lost"; answers: number } | { type: "back" };

export class DaemonGoneError extends Error {
  constructor() {
    super("The Hearth daemon went away (stopped or crashed). A message it accepted is kept in its inbox and answered when it starts again.");
    this.name = "DaemonGoneError";
  }
}

/** A message typed while the daemon was away, dropped before it could be sent (Ctrl+C, Ctrl+D). */
export class NotSentError extends Error {
  readonly text: string;
  constructor(text: string) {
    super(`Not sent (the daemon is not running): "${clip(text)}"`);
    this.name = "NotSentError";
    this.text = text;
  }
}

const clip = (text: string): string => {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
};

type ChatRequest = Extract<ClientRequest, { type: "chat" }>;

/**
 * A chat request waiting for its answer: `sent` once written to a live connection (a
 * reconnecting client queues it while there is none), `accepted` once the daemon said it has it.
 */
export interface PendingChat {
  request: ChatRequest;
  sent: boolean;
  accepted: boolean;
  onEvent: (e: CliEvent) => void;
  resolve: (e: ChatEnd) => void;
  reject: (e: Error) => void;
}

/** Routes server events to the requests waiting for them. */
export class Dispatcher {
  readonly chats = new Map<string, PendingChat>();
  readonly rpcs = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly statusWaiters: Array<(s: GatewayStatus) => void> = [];
  readonly mailboxWaiters: Array<(letters: KeptLetter[]) => void> = [];
  notice: (text: string) => void = (t) => process.stdout.write(`\n${t}\n`);
  question: (e: QuestionEvent) => void = () => {};

  handle = (e: ServerEvent): void => {
    switch (e.type) {
      case "joined":
      case "text_delta":
      case "text_reset":
      case "tool_start":
      case "tool_end":
      case "note":
        this.chats.get(e.requestId)?.onEvent(e);
        break;
      case "final":
      case "failed": {
        const chat = this.chats.get(e.requestId);
        this.chats.delete(e.requestId);
        chat?.onEvent(e);
        chat?.resolve(e);
        break;
      }
      case "notice":
        this.notice(e.text);
        break;
      case "question":
      case "question_settled":
        this.question(e);
        break;
      case "status":
        this.statusWaiters.shift()?.(e.status);
        break;
      case "mailbox":
        this.mailboxWaiters.shift()?.(e.letters);
        break;
      case "rpc_result": {
        const rpc = this.rpcs.get(e.id);
        this.rpcs.delete(e.id);
        if (e.ok) rpc?.resolve(e.result);
        else rpc?.reject(new Error(e.error));
        break;
      }
      case "accepted": {
        const chat = this.chats.get(e.requestId);
        if (chat) chat.accepted = true;
        break;
      }
      case "error": {
        // An error naming a request fails that request; one without fails all that wait.
        const err = new Error(e.message);
        const chat = e.requestId !== undefined ? this.chats.get(e.requestId) : undefined;
        const rpc = e.requestId !== undefined ? this.rpcs.get(e.requestId) : undefined;
        if (chat || rpc) {
          this.chats.delete(e.requestId!);
          this.rpcs.delete(e.requestId!);
          chat?.reject(err);
          rpc?.reject(err);
        } else {
          for (const c of this.chats.values()) c.reject(err);
          this.chats.clear();
          for (const w of this.mailboxWaiters.splice(0)) w([]);
        }
        break;
      }
      default:
        e satisfies never;
    }
  };

  failAll(err: Error): void {
    for (const c of this.chats.values()) c.reject(err);
    for (const r of this.rpcs.values()) r.reject(err);
    this.chats.clear();
    this.rpcs.clear();
    for (const w of this.mailboxWaiters.splice(0)) w([]);
  }

  /**
   * The connection ended, and another will be tried (daemon-link.ts): requests the daemon had
   * taken fail with `err` (their answers reach the chat after the restart), the chats it had not
   * taken stay, to be sent again on the next connection. Returns how many failed.
   */
  connectionLost(err: Error): number {
    let answers = 0;
    for (const [id, c] of this.chats) {
      if (!c.accepted) {
        c.sent = false;
        continue;
      }
      this.chats.delete(id);
      c.reject(err);
      answers++;
    }
    for (const r of this.rpcs.values()) r.reject(err);
    this.rpcs.clear();
    for (const w of this.mailboxWaiters.splice(0)) w([]);
    return answers;
  }

  /** The chats waiting for a connection to be sent on, oldest first. */
  unsent(): PendingChat[] {
    return [...this.chats.values()].filter((c) => !c.sent);
  }

  /** Fails every chat waiting for a connection with NotSentError; their texts, oldest first. */
  dropUnsent(): string[] {
    const texts: string[] = [];
    for (const [id, c] of this.chats) {
      if (c.sent) continue;
      this.chats.delete(id);
      texts.push(c.request.text);
      c.reject(new NotSentError(c.request.text));
    }
    return texts;
  }

  /** `send` returns false when the request could not go out now (no connection: a chat then waits). */
  client(kind: GatewayClient["kind"], send: (r: ClientRequest) => boolean | void, close: () => Promise<void>, statusDirect?: () => GatewayStatus): GatewayClient {
    return {
      kind,
      chat: (text, onEvent, files = []) =>
        new Promise<ChatEnd>((resolve, reject) => {
          const request: ChatRequest = { type: "chat", text, requestId: randomUUID(), ...(files.length > 0 ? { files } : {}) };
          const chat: PendingChat = { request, sent: true, accepted: false, onEvent, resolve, reject };
          this.chats.set(request.requestId!, chat);
          chat.sent = send(request) !== false;
        }),
      abort: () => send({ type: "abort" }),
      status: () =>
        statusDirect
          ? Promise.resolve(statusDirect())
          : new Promise<GatewayStatus>((resolve) => {
              this.statusWaiters.push(resolve);
              send({ type: "status" });
            }),
      rpc: (method, params) =>
        new Promise((resolve, reject) => {
          const id = randomUUID();
          this.rpcs.set(id, { resolve, reject });
          send({ type: "rpc", id, method, params });
        }),
      onNotice: (fn) => {
        this.notice = fn;
      },
      listen: () =>
        new Promise<KeptLetter[]>((resolve) => {
          this.mailboxWaiters.push(resolve);
          send({ type: "listen" });
        }),
      onQuestion: (fn) => {
        this.question = fn;
      },
      choose: (key, choiceId) => send({ type: "choose", key, choiceId }),
      close,
    };
  }
}

/** Connects to the daemon's socket; null when no daemon is listening there. */
export async function connectDaemon(socketPath: string): Promise<GatewayClient | null> {
  const socket = await openSocket(socketPath);
  if (!socket) return null;
  const d = new Dispatcher();
  socket.on("data", lineDecoder((v) => d.handle(v as ServerEvent), () => {}));
  socket.on("error", () => {});
  socket.on("close", () => d.failAll(new DaemonGoneError()));
  return d.client(
    "daemon",
    (r) => void (socket.writable && socket.write(`${JSON.stringify(r)}\n`)),
    () => closeSocket(socket),
  );
}

/** Connects to a Unix socket; null when nothing listens there. */
export function openSocket(socketPath: string): Promise<Socket | null> {
  return new Promise<Socket | null>((resolve) => {
    const s = connect(socketPath);
    s.once("connect", () => resolve(s));
    s.once("error", () => resolve(null));
  });
}

/** Ends the connection; at once when it is closed already (its end callback would never come). */
export function closeSocket(socket: Socket): Promise<void> {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    // A daemon that does not answer the end within a second is not waited for.
    const timer = setTimeout(() => socket.destroy(), 1_000);
    socket.once("close", () => (clearTimeout(timer), resolve()));
    socket.end();
  });
}

/** A client for a gateway running in this process. */
export function embeddedClient(gateway: Gateway, rpc: (method: string, params: unknown) => Promise<unknown>): GatewayClient {
  const d = new Dispatcher();
  const client = gateway.cli.attach((e) => d.handle(e));
  return d.client(
    "embedded",
    (r) => {
      switch (r.type) {
        case "chat":
          gateway.cli.receive(client, r.text, r.requestId, r.files ?? []);
          break;
        case "abort":
          gateway.context.lanes.stop("main");
          break;
        case "rpc":
          rpc(r.method, r.params).then(
            (result) => d.handle({ type: "rpc_result", id: r.id, ok: true, result }),
            (err: Error) => d.handle({ type: "rpc_result", id: r.id, ok: false, error: err.message }),
          );
          break;
        case "status":
          d.handle({ type: "status", status: gateway.status() });
          break;
        case "listen":
          d.handle({ type: "mailbox", letters: gateway.cli.listen(client) });
          break;
        case "choose":
          void gateway.cli.choose(r.key, r.choiceId);
          break;
      }
    },
    async () => {
      gateway.cli.detach(client);
      await gateway.stop();
    },
    () => gateway.status(),
  );
}
