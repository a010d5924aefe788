// `hearth chat`: the owner's terminal conversation (the main session). Through the daemon's
// socket when one runs, else through a gateway embedded in this process.
import { createInterface } from "node:readline";
import type { CliEvent } from "../channels/cli.ts";
import { homePaths } from "../gateway/home.ts";
import { connectDaemon, embeddedClient, type ChatEnd, type GatewayClient } from "./client.ts";
import { startEmbeddedGateway } from "./embedded.ts";

export interface ChatIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Prints one reply's events: the text on stdout, tool progress on stderr. */
export class ReplyPrinter {
  #printed = "";
  readonly #io: ChatIO;

  constructor(io: ChatIO) {
    this.#io = io;
  }

  onEvent = (e: CliEvent): void => {
    switch (e.type) {
      case "text_delta":
        this.#write(e.text);
        break;
      case "text_reset":
      case "final":
        this.#catchUp(e.text);
        if (e.type === "final") this.#endLine();
        break;
      case "failed":
        this.#endLine();
        this.#io.stderr.write(`hearth: ${e.message}\n`);
        break;
      case "tool_start":
        this.#endLine();
        this.#io.stderr.write(`→ ${e.name}${e.summary ? `: ${e.summary}` : ""}\n`);
        break;
      case "tool_end":
        if (!e.ok) this.#io.stderr.write(`  ✗ ${e.name} failed\n`);
        break;
      case "notice":
        this.#io.stdout.write(`${e.text}\n`);
        break;
      default:
        e satisfies never;
    }
  };

  /** Shows `text` as the whole reply: prints only what is missing when it extends what is shown. */
  #catchUp(text: string): void {
    if (text.startsWith(this.#printed)) {
      this.#write(text.slice(this.#printed.length));
    } else {
      // Printed text cannot be taken back: say so, then print the reply in full.
      this.#endLine();
      this.#io.stderr.write("(the answer restarted)\n");
      this.#printed = "";
      this.#write(text);
    }
  }

  #write(text: string): void {
    if (!text) return;
    this.#io.stdout.write(text);
    this.#printed += text;
  }

  #endLine(): void {
    if (this.#printed && !this.#printed.endsWith("\n")) {
      this.#io.stdout.write("\n");
      this.#printed += "\n";
    }
  }
}

export function exitCodeFor(end: ChatEnd): number {
  if (end.type === "failed") return 1;
  return end.outcome === "answered" ? 0 : end.outcome === "stopped" ? 130 : 1;
}

/** The daemon when it runs, otherwise an embedded gateway (started with the CLI channel only). */
export async function openClient(home: string, stderr: NodeJS.WritableStream): Promise<GatewayClient> {
  const daemon = await connectDaemon(homePaths(home).socket);
  if (daemon) return daemon;
  const { gateway, rpc } = await startEmbeddedGateway(home, stderr);
  return embeddedClient(gateway, rpc);
}

/** `hearth chat -m TEXT`: one message, its reply streamed to stdout. */
export async function chatOnce(client: GatewayClient, text: string, io: ChatIO): Promise<number> {
  const printer = new ReplyPrinter(io);
  const onSigint = () => client.abort();
  process.on("SIGINT", onSigint);
  try {
    return exitCodeFor(await client.chat(text, printer.onEvent));
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/**
 * Interactive chat. Lines typed while an answer streams are sent at once (they steer it);
 * replies print one at a time, in order, and a reply identical to the one just printed (a
 * message that joined the same run) is not printed twice. Ctrl+C stops the answer, Ctrl+D quits.
 */
export async function chatInteractive(client: GatewayClient, io: ChatIO): Promise<number> {
  const rl = createInterface({ input: io.stdin, output: io.stdout, terminal: (io.stdin as { isTTY?: boolean }).isTTY === true });
  const tty = (io.stdin as { isTTY?: boolean }).isTTY === true;
  if (tty) io.stderr.write(`Connected to ${client.kind === "daemon" ? "the Hearth daemon" : "Hearth (no daemon running: embedded)"}. Ctrl+C stops an answer, Ctrl+D quits.\n`);
  let inFlight = 0;
  let lastFinal: string | null = null;
  let chain: Promise<void> = Promise.resolve();
  const prompt = () => tty && inFlight === 0 && rl.prompt();
  rl.setPrompt("› ");
  client.onNotice((text) => io.stdout.write(`\n${text}\n`));

  // On a terminal readline turns Ctrl+C into its own event; otherwise it arrives as a signal.
  const onInterrupt = () => {
    if (inFlight > 0) client.abort();
    else if (tty) io.stderr.write("\n(Ctrl+D quits)\n"), prompt();
    else rl.close();
  };
  rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);
  rl.on("line", (line) => {
    const text = line.trim();
    if (!text) return prompt();
    inFlight++;
    const events: CliEvent[] = [];
    let live: ((e: CliEvent) => void) | null = null;
    const done = client.chat(text, (e) => (live ? live(e) : events.push(e)));
    // Replies print in order: this one starts printing when the previous one is done.
    chain = chain.then(async () => {
      const printer = new ReplyPrinter(io);
      let end: ChatEnd;
      try {
        const replay = () => events.splice(0).forEach((e) => e.type !== "final" && e.type !== "failed" && printer.onEvent(e));
        if (!(await isDuplicate(done, lastFinal))) {
          replay();
          live = printer.onEvent;
        }
        end = await done;
        if (end.type === "final" && end.text !== lastFinal) printer.onEvent(end);
        if (end.type === "failed") printer.onEvent(end);
        lastFinal = end.type === "final" ? end.text : null;
      } catch (err) {
        io.stderr.write(`hearth: ${(err as Error).message}\n`);
      } finally {
        inFlight--;
        prompt();
      }
    });
  });
  prompt();
  await new Promise<void>((resolve) => rl.once("close", resolve));
  await chain;
  process.off("SIGINT", onInterrupt);
  return 0;
}

/**
 * True when `done` settles with exactly `lastFinal` within a moment: a message that joined the
 * run just printed is finished by the daemon together with it.
 */
async function isDuplicate(done: Promise<ChatEnd>, lastFinal: string | null): Promise<boolean> {
  if (lastFinal === null) return false;
  const settled = await Promise.race([done.then((e) => e, () => null), new Promise<null>((r) => setTimeout(() => r(null), 50))]);
  return settled?.type === "final" && settled.text === lastFinal;
}
