// signal-cli's event stream (`GET /api/v1/events`, server-sent events): each incoming envelope is
// one `receive` event whose data is a JSON line. The parser is bounded: a line or an event larger
// than the limits ends the stream with an error instead of growing without end, and a stream
// silent for longer than signal-cli's keep-alive (a comment every 15 s) allows is taken for dead.
import { causeOf } from "./rpc.ts";

/** Longest event a stream may carry (an envelope with its attachments' descriptions). */
const MAX_EVENT_BYTES = 1_000_000;
/** signal-cli writes a keep-alive every 15 s; four missed ones mean the connection is gone. */
const DEFAULT_SILENCE_MS = 60_000;

/** The stream broke or could not be opened; `retryable` is always true (signal-cli may come back). */
export class SignalStreamError extends Error {
  override name = "SignalStreamError";
  readonly retryable = true;
}

export interface SignalEvent {
  /** The SSE event type ("receive"); "message" when the stream gave none. */
  type: string;
  data: string;
}

/**
 * Opens the stream and hands each event to `onEvent`, one at a time: the next is read only once
 * the promise `onEvent` returned has settled (it must not reject). `onOpen` is called once the
 * stream is open. Resolves when `signal` aborts; rejects with SignalStreamError when the stream
 * could not be opened, broke, ended, went silent or carried an oversized event.
 */
export async function readSignalEvents(httpUrl: string, o: { signal: AbortSignal; onOpen(): void; onEvent(e: SignalEvent): Promise<void>; silenceMs?: number }): Promise<void> {
  const silence = new AbortController();
  const stop = AbortSignal.any([o.signal, silence.signal]);
  const silenceMs = o.silenceMs ?? DEFAULT_SILENCE_MS;
  let timer: NodeJS.Timeout | undefined;
  const heard = () => {
    clearTimeout(timer);
    timer = setTimeout(() => silence.abort(), silenceMs);
  };
  const where = new URL(httpUrl).host;
  try {
    heard();
    let res: Response;
    try {
      res = await fetch(new URL("/api/v1/events", httpUrl), { headers: { accept: "text/event-stream" }, signal: stop });
    } catch (err) {
      if (o.signal.aborted) return;
      throw new SignalStreamError(`signal-cli cannot be reached at ${where} (${causeOf(err)})`, { cause: err });
    }
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      throw new SignalStreamError(`signal-cli answered HTTP ${res.status} for its event stream at ${where}`);
    }
    o.onOpen();
    const parser = new EventParser();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        heard();
        for (const event of parser.push(chunk)) {
          // Not silence: Hearth is busy with the event. Cutting the stream now would drop the
          // events signal-cli already wrote behind it, which it never sends again.
          clearTimeout(timer);
          await o.onEvent(event);
          heard();
        }
      }
    } catch (err) {
      if (o.signal.aborted) return;
      if (err instanceof SignalStreamError) throw err;
      const why = silence.signal.aborted ? `silent for ${Math.round(silenceMs / 1000)} s` : causeOf(err);
      throw new SignalStreamError(`signal-cli's event stream at ${where} broke (${why})`, { cause: err });
    }
    if (o.signal.aborted) return;
    throw new SignalStreamError(`signal-cli closed its event stream at ${where}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Server-sent events from bytes: `event:` and `data:` fields, a blank line ends an event; comments are skipped. */
export class EventParser {
  readonly #decoder = new TextDecoder();
  #buffer = "";
  #type = "";
  #data: string[] = [];
  #size = 0;
  #afterCR = false;

  /** The events `chunk` completes. Throws SignalStreamError when a line or an event is over the limit. */
  push(chunk: Uint8Array): SignalEvent[] {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    const events: SignalEvent[] = [];
    for (;;) {
      // A "\r" at the very end may be the first half of a "\r\n" the next chunk completes.
      if (this.#buffer === "") break;
      if (this.#afterCR && this.#buffer.startsWith("\n")) this.#buffer = this.#buffer.slice(1);
      this.#afterCR = false;
      const end = this.#buffer.search(/\r\n|\r|\n/);
      if (end < 0) break;
      this.#afterCR = end === this.#buffer.length - 1 && this.#buffer[end] === "\r";
      const line = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + (this.#buffer.startsWith("\r\n", end) ? 2 : 1));
      const event = this.#line(line);
      if (event) events.push(event);
    }
    if (this.#buffer.length + this.#size > MAX_EVENT_BYTES) throw new SignalStreamError(`an event of signal-cli's stream is longer than ${MAX_EVENT_BYTES} bytes`);
    return events;
  }

  #line(line: string): SignalEvent | null {
    if (line === "") {
      const event = this.#data.length > 0 ? { type: this.#type || "message", data: this.#data.join("\n") } : null;
      this.#type = "";
      this.#data = [];
      this.#size = 0;
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.#type = value;
    else if (field === "data") {
      this.#data.push(value);
      this.#size += value.length;
      if (this.#size > MAX_EVENT_BYTES) throw new SignalStreamError(`an event of signal-cli's stream is longer than ${MAX_EVENT_BYTES} bytes`);
    }
    return null;
  }
}
