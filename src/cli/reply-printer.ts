// How one reply looks in the terminal: the reply text, exactly as the model wrote it, on
// stdout; everything else (tool progress, failures, notes) on stderr. Whatever the events, the
// text reaches stdout once.
import type { CliEvent } from "../channels/terminal/channel.ts";

export interface PrinterIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export class ReplyPrinter {
  /** The reply text written to stdout so far (nothing else is ever written there). */
  #shown = "";
  /** True once the current line of stdout was ended by the printer (a newline not in the reply). */
  #ended = false;
  /** The user asked to stop this answer (Ctrl+C): a tool cut short was stopped, not failed. */
  #stopRequested = false;
  readonly #io: PrinterIO;

  constructor(io: PrinterIO) {
    this.#io = io;
  }

  onEvent = (e: CliEvent): void => {
    switch (e.type) {
      case "joined":
        break;
      case "text_delta":
        if (e.notice) this.#notice(e.text);
        else this.#write(e.text);
        break;
      case "text_reset":
        this.#show(e.text);
        break;
      case "final":
        this.#show(e.text);
        this.#endLine();
        break;
      case "failed":
        this.#endLine();
        this.#io.stderr.write(`hearth: ${e.message}\n`);
        break;
      case "tool_start":
        // On a terminal stdout and stderr share the screen: start the tool line on a line of
        // its own, without putting a newline into the reply itself (stdout may be a pipe).
        if (this.#midLine() && isTTY(this.#io.stderr) && isTTY(this.#io.stdout)) this.#io.stderr.write("\n");
        this.#io.stderr.write(`→ ${e.name}${e.summary ? `: ${e.summary}` : ""}\n`);
        break;
      case "tool_end":
        if (!e.ok) this.#io.stderr.write(this.#stopRequested ? `  ■ ${e.name} stopped\n` : `  ✗ ${e.name} failed\n`);
        break;
      case "notice":
        this.#io.stdout.write(`${e.text}\n`);
        break;
      case "note":
        // Not the answer: stdout stays the reply alone (it may be piped into a file).
        if (this.#midLine() && isTTY(this.#io.stderr) && isTTY(this.#io.stdout)) this.#io.stderr.write("\n");
        this.#io.stderr.write(`${e.text}\n`);
        break;
      case "question":
      case "question_settled":
        // Questions are not part of a reply: the chat shows them apart (chat.ts).
        break;
      default:
        e satisfies never;
    }
  };

  /** Ctrl+C was pressed while this reply was shown. */
  stopRequested(): void {
    this.#stopRequested = true;
  }

  /** Makes `text` the whole reply shown: prints only what is missing when it extends what is shown. */
  #show(text: string): void {
    if (text.startsWith(this.#shown)) {
      this.#write(text.slice(this.#shown.length));
      return;
    }
    // A retried model stream said something else. Printed text cannot be taken back: say so,
    // then print the new reply in full.
    this.#endLine();
    this.#io.stderr.write("(the answer restarted)\n");
    this.#shown = "";
    this.#ended = false;
    this.#write(text);
  }

  /** Hearth's own line about the run (a model error, a limit): stderr, yet part of the reply the final repeats. */
  #notice(text: string): void {
    this.#endLine();
    this.#io.stderr.write(`${text.replace(/^\n+/, "")}\n`);
    this.#shown += text;
  }

  #write(text: string): void {
    if (!text) return;
    this.#io.stdout.write(text);
    this.#shown += text;
    this.#ended = false;
  }

  #midLine(): boolean {
    return this.#shown !== "" && !this.#shown.endsWith("\n");
  }

  #endLine(): void {
    if (this.#midLine() && !this.#ended) this.#io.stdout.write("\n");
    this.#ended = true;
  }
}

const isTTY = (s: NodeJS.WritableStream): boolean => (s as { isTTY?: boolean }).isTTY === true;
