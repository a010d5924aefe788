// `hearth chat`: the owner's terminal conversation (the main session). Through the daemon's
// socket when one runs, else through a gateway embedded in this process.
import { statSync } from "node:fs";
import { basename, resolve as resolvePath } from "node:path";
import { clearLine, createInterface, cursorTo } from "node:readline";
import { UsageError } from "./args.ts";
import type { CliEvent, KeptLetter } from "../channels/terminal/channel.ts";
import { homePaths } from "../config/home.ts";
import { connectDaemon, DaemonGoneError, embeddedClient, NotSentError, type ChatEnd, type GatewayClient } from "./client.ts";
import { connectDaemonLink } from "./daemon-link.ts";
import { ReplyPrinter } from "./reply-printer.ts";

export interface ChatIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function exitCodeFor(end: ChatEnd): number {
  if (end.type === "failed") return 1;
  return end.outcome === "answered" ? 0 : end.outcome === "stopped" ? 130 : 1;
}

/**
 * The daemon when it runs, otherwise an embedded gateway (started with the CLI channel only).
 * `interactive`: a connection to the daemon that outlives its restarts (daemon-link.ts).
 */
export async function openClient(home: string, stderr: NodeJS.WritableStream, interactive = false): Promise<GatewayClient> {
  const socket = homePaths(home).socket;
  const daemon = await (interactive ? connectDaemonLink(socket) : connectDaemon(socket));
  if (daemon) return daemon;
  // The daemon's whole graph, loaded only now that no daemon answers.
  const { startEmbeddedGateway } = await import("./embedded.ts");
  const { gateway, rpc } = await startEmbeddedGateway(home, stderr);
  return embeddedClient(gateway, rpc);
}

/** An `--attach` or `/attach` path: absolute, and a readable file now (the daemon reads it). */
export function attachablePath(p: string): string {
  const abs = resolvePath(p);
  let ok = false;
  try {
    ok = statSync(abs).isFile();
  } catch {
    ok = false;
  }
  if (!ok) throw new UsageError(`Cannot attach ${p}: no such file.`);
  return abs;
}

/** `hearth chat -m TEXT`: one message, its reply streamed to stdout. */
export async function chatOnce(client: GatewayClient, text: string, io: ChatIO, files: string[] = []): Promise<number> {
  const printer = new ReplyPrinter(io);
  const onSigint = () => {
    printer.stopRequested();
    client.abort();
  };
  process.on("SIGINT", onSigint);
  try {
    return exitCodeFor(await client.chat(text, printer.onEvent, files));
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/**
 * Interactive chat. Lines typed while an answer streams are sent at once (they steer it);
 * replies print one at a time, in the order the lines were typed. A message that joined a run
 * already shown (the daemon says so with its `joined` event) prints nothing of its own: its
 * answer is that run's answer. Ctrl+C stops the answer, Ctrl+D quits. On a terminal, what is
 * typed while an answer is on its way is not echoed into it: the line shows again at the next
 * prompt, and a line sent meanwhile is shown once that answer is whole. When the daemon goes away the
 * chat says so at once and connects again when it is back; a line typed meanwhile is sent then,
 * or said to be not sent (Ctrl+C, Ctrl+D). Returns 1 when it quit with a typed line not sent, else 0.
 */
export async function chatInteractive(client: GatewayClient, io: ChatIO): Promise<number> {
  const tty = (io.stdin as { isTTY?: boolean }).isTTY === true;
  client.onNotice((text) => io.stdout.write(`\n${text}\n`));
  // An approval: shown on stderr with numbered choices. On a terminal one keypress answers it;
  // piped, a line with the number does. While it waits, other text is refused with a hint (it
  // would otherwise steer a run that is paused on this very question); commands still go through.
  let question: { key: string; ids: string[] } | null = null;
  const answerKeys = (n: number) => (n === 1 ? "1" : `1–${n}`);
  const choose = (n: string): boolean => {
    const picked = question && /^\d$/.test(n) ? question.ids[Number(n) - 1] : undefined;
    if (!question || picked === undefined) return false;
    client.choose(question.key, picked);
    question = null;
    return true;
  };
  client.onQuestion((e) => {
    if (e.type === "question") {
      question = { key: e.key, ids: e.choices.map((c) => c.id) };
      const how = tty ? `press ${answerKeys(e.choices.length)}` : `type ${answerKeys(e.choices.length)} and Enter`;
      io.stderr.write(`\n${e.text}\n${e.choices.map((c, i) => `[${i + 1}] ${c.label}`).join("  ")} — ${how}\n`);
    } else {
      if (question?.key === e.key) question = null;
      io.stderr.write(`${e.text.split("\n").at(-1)}\n`);
    }
  });
  // What came for the terminal while no chat was open, first; before readline takes any input.
  io.stdout.write(formatLetters(await client.listen()));
  let inFlight = 0;
  /** False while the daemon is away (a reconnecting client only). */
  let connected = true;
  /** An answer is on its way to this screen (while the daemon is away, none is). */
  const answering = () => inFlight > 0 && connected;
  // readline echoes what is typed; while an answer is on its way that echo would land inside
  // the answer's text, so it is held back and the line is drawn again at the next prompt.
  const rl = createInterface({ input: io.stdin, output: tty ? heldWhile(io.stdout, answering) : io.stdout, terminal: tty });
  if (tty) {
    // One key answers a waiting question: readline has put the digit on the (empty) line by
    // the time this listener runs, so it is taken off again (Ctrl+U); the prompt that redraws
    // is erased too while an answer is on its way (none is shown then), so the outcome's line
    // starts clean.
    io.stdin.on("keypress", (str: string | undefined) => {
      if (!question || !str || rl.line !== str || !choose(str)) return;
      rl.write(null, { ctrl: true, name: "u" });
      if (inFlight > 0) clearLine(io.stdout, 0), cursorTo(io.stdout, 0);
    });
  }
  if (tty) io.stderr.write(`Connected to ${client.kind === "daemon" ? "the Hearth daemon" : "Hearth (no daemon running: embedded)"}. Ctrl+C stops an answer, Ctrl+D quits.\n`);
  let chain: Promise<void> = Promise.resolve();
  const shownRuns = new Set<string>();
  let lastError: string | null = null;
  /** Lines the chat quit without sending (the daemon away at Ctrl+D): the exit code says so. */
  let notSent = 0;
  let quitting = false;
  // The cursor stays where it was: a line typed while an answer came is drawn again with it at its end.
  const prompt = () => tty && !answering() && rl.prompt(true);
  /**
   * A line of Hearth's own on stderr. On a terminal it takes the place of the prompt's line
   * (drawn again after it), or, while an answer is being shown, starts below the answer's text.
   */
  const tell = (line: string, wasAnswering: boolean) => {
    if (tty && !wasAnswering) clearLine(io.stdout, 0), cursorTo(io.stdout, 0);
    io.stderr.write(`${tty && wasAnswering ? "\n" : ""}${line}\n`);
    prompt();
  };
  rl.setPrompt("› ");

  client.onLink?.((e) => {
    const was = answering();
    if (e.type === "lost") {
      connected = false;
      // Its questions went with it: a restarted daemon asks again, in a chat that is open then.
      question = null;
      const waiting = e.answers === 0 ? "" : e.answers === 1 ? " The answer you were waiting for comes when it is back." : ` The ${e.answers} answers you were waiting for come when it is back.`;
      tell(`hearth: The Hearth daemon went away (stopped or crashed). Waiting for it to come back; what you type meanwhile is sent then.${waiting}`, was);
    } else {
      connected = true;
      tell("Connected to the Hearth daemon again.", was);
      // What it kept for the terminal meanwhile (an answer that came after its chat closed).
      void client.listen().then((letters) => io.stdout.write(formatLetters(letters)));
    }
  });

  // On a terminal readline turns Ctrl+C into its own event; otherwise it arrives as a signal.
  let printing: ReplyPrinter | null = null;
  const onInterrupt = () => {
    // Ctrl+C drops what was typed on the current line, as a shell does: it must not become the
    // start of the next message. (End of line, then delete to its start: readline's own keys.)
    if (tty && rl.line) {
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
    }
    if (inFlight > 0) {
      printing?.stopRequested();
      // Lines waiting for the daemon to come back are dropped (each is said to be not sent).
      if (!connected) client.dropUnsent?.();
      else client.abort();
    }
    else if (tty) io.stderr.write("\n(Ctrl+D quits)\n"), prompt();
    else rl.close();
  };
  rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);
  /** Files attached with `/attach PATH` alone: they go with the next message. */
  let staged: string[] = [];
  rl.on("line", (line) => {
    let text = line.trim();
    if (!text) return prompt();
    if (choose(text)) return;
    // Commands (a slash, or a bare "stop", as gateway/commands.ts parseCommand reads them) still go.
    if (question && !/^(\/|stop[.!]?$)/i.test(text)) {
      io.stderr.write(`(An approval is waiting: ${tty ? "press" : "type"} ${answerKeys(question.ids.length)}${tty ? "" : " and Enter"} to answer it, or /stop to stop. Your message was not sent.)\n`);
      return prompt();
    }
    // `/attach PATH`: the file goes with the next message; `/attach PATH message`: at once.
    const attach = /^\/attach(?:\s+(\S+)\s*(.*))?$/.exec(text);
    if (attach) {
      if (!attach[1]) {
        io.stderr.write("hearth: Usage: /attach PATH [message]\n");
        return prompt();
      }
      try {
        staged.push(attachablePath(attach[1]));
      } catch (err) {
        io.stderr.write(`hearth: ${(err as Error).message}\n`);
        return prompt();
      }
      text = attach[2]!;
      if (!text) {
        io.stderr.write(`(${basename(attach[1])} goes with your next message)\n`);
        return prompt();
      }
    }
    const files = staged;
    staged = [];
    // Typed while an answer was on its way: not echoed then (heldWhile), so shown once that
    // answer is whole (above its own answer, or below the one it steered).
    const unseen = tty && answering() ? `› ${line}   (typed during the answer above)\n` : "";
    inFlight++;
    if (!connected) io.stderr.write("(The daemon is not running: this goes when it is back; Ctrl+C drops it.)\n");
    const events = new EventQueue();
    client.chat(text, events.push, files).then(() => events.close(), (err: Error) => events.close(err));
    // Replies print in order: this one starts printing when the previous one is done.
    chain = chain.then(async () => {
      try {
        if (unseen) io.stdout.write(unseen);
        printing = new ReplyPrinter(io);
        await printReply(events, shownRuns, printing);
        // The gateway's list is every chat's; this command is the terminal's own.
        if (/^\/help$/i.test(text)) io.stdout.write(`${TERMINAL_COMMANDS}\n`);
      } catch (err) {
        if (err instanceof NotSentError) {
          if (quitting) notSent++;
          io.stderr.write(`hearth: ${err.message}\n`);
          return;
        }
        // Said already, the moment it went (onLink).
        if (err instanceof DaemonGoneError && client.onLink) return;
        // A daemon that went away fails every waiting request with the same error: say it once.
        const message = (err as Error).message;
        if (err instanceof DaemonGoneError) question = null;
        if (message !== lastError) io.stderr.write(`hearth: ${message}\n`);
        lastError = message;
      } finally {
        printing = null;
        inFlight--;
        prompt();
      }
    });
  });
  prompt();
  await new Promise<void>((resolve) => rl.once("close", resolve));
  // Ctrl+D while the daemon is away: what waits for it is not sent, and said so.
  quitting = true;
  client.dropUnsent?.();
  await chain;
  process.off("SIGINT", onInterrupt);
  return notSent > 0 ? 1 : 0;
}

/**
 * `out` as readline sees it: while `held()` is true its writes (the echo of what is typed, the
 * prompt's redraws) are dropped; everything else about the terminal (its size, its events) is
 * the real one's.
 */
function heldWhile(out: NodeJS.WritableStream, held: () => boolean): NodeJS.WritableStream {
  return new Proxy(out, {
    get(target, prop) {
      if (prop === "write") {
        return (chunk: unknown, ...rest: unknown[]) => {
          if (!held()) return (target.write as (...a: unknown[]) => boolean)(chunk, ...rest);
          const done = rest.at(-1);
          if (typeof done === "function") queueMicrotask(() => (done as () => void)());
          return true;
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** What /help adds in the terminal: the commands this client handles itself. */
export const TERMINAL_COMMANDS = "/attach PATH [message] — attach a file from this machine: with a message, sent at once; alone, it goes with your next message";

/** Mailbox letters as the chat prints them on connect: a header line naming sender and time, then the text. */
export function formatLetters(letters: readonly KeptLetter[]): string {
  return letters.map((l) => `── while no terminal was open: ${l.from}, ${l.when} ──\n${l.text}\n\n`).join("");
}

/** Prints one request's reply, unless it joined a run whose reply is (being) printed already. */
async function printReply(events: EventQueue, shownRuns: Set<string>, printer: ReplyPrinter): Promise<void> {
  let quiet = false;
  for await (const e of events) {
    if (e.type === "joined") {
      quiet = shownRuns.has(e.runId);
      shownRuns.add(e.runId);
    } else if (!quiet) {
      printer.onEvent(e);
    }
  }
}

/** One request's events, read in order as they arrive; ends after the last one or with an error. */
class EventQueue implements AsyncIterable<CliEvent> {
  readonly #events: CliEvent[] = [];
  #end: { error?: Error } | null = null;
  #wake: (() => void) | null = null;

  push = (e: CliEvent): void => {
    this.#events.push(e);
    this.#wake?.();
  };

  close(error?: Error): void {
    this.#end = { error };
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<CliEvent> {
    for (;;) {
      const e = this.#events.shift();
      if (e) {
        yield e;
        continue;
      }
      if (this.#end) {
        if (this.#end.error) throw this.#end.error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
  }
}
