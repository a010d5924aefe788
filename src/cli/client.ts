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
  close(): Promise<void>;
}

export class DaemonGoneError extends Error {
  constructor() {
    super("The Hearth daemon went away (stopped or crashed). A message it accepted is kept in its inbox and answered when it starts again.");
    this.name = "DaemonGoneError";
  }
}

/** Routes server events to the requests waiting for them. */
class Dispatcher {
  readonly chats = new Map<string, { onEvent: (e: CliEvent) => void; resolve: (e: ChatEnd) => void; reject: (e: Error) => void }>();
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
      case "accepted":
        break;
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

  client(kind: GatewayClient["kind"], send: (r: ClientRequest) => void, close: () => Promise<void>, statusDirect?: () => GatewayStatus): GatewayClient {
    return {
      kind,
      chat: (text, onEvent, files = []) =>
        new Promise<ChatEnd>((resolve, reject) => {
          const requestId = randomUUID();
          this.chats.set(requestId, { onEvent, resolve, reject });
          send({ type: "chat", text, requestId, ...(files.length > 0 ? { files } : {}) });
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
  const socket = await new Promise<Socket | null>((resolve) => {
    const s = connect(socketPath);
    s.once("connect", () => resolve(s));
    s.once("error", () => resolve(null));
  });
  if (!socket) return null;
  const d = new Dispatcher();
  socket.on("data", lineDecoder((v) => d.handle(v as ServerEvent), () => {}));
  socket.on("error", () => {});
  socket.on("close", () => d.failAll(new DaemonGoneError()));
  return d.client(
    "daemon",
    (r) => socket.write(`${JSON.stringify(r)}\n`),
    () => new Promise<void>((resolve) => socket.end(resolve)),
  );
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
