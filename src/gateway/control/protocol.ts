// The control socket's protocol: JSON lines both ways. Shared by the daemon and the CLI.
import type { CliEvent, KeptLetter } from "../../channels/terminal/channel.ts";
import type { GatewayStatus } from "../status.ts";

export type ClientRequest =
  /** `files`: absolute paths of local files sent with the message (`--attach`, `/attach`). */
  | { type: "chat"; text: string; requestId?: string; files?: string[] }
  /** Ctrl+C: stop the main session's active run. */
  | { type: "abort" }
  | { type: "status" }
  /** An interactive chat: send me proactive messages, and what waited for me in the mailbox. */
  | { type: "listen" }
  /** The answer to a `question` event: the choice's id. */
  | { type: "choose"; key: string; choiceId: string }
  | { type: "rpc"; id: string; method: string; params?: unknown };

export type ServerEvent =
  | CliEvent
  | { type: "accepted"; requestId: string }
  | { type: "status"; status: GatewayStatus }
  /** The answer to `listen`: what waited in the terminal's mailbox (now forgotten), oldest first. */
  | { type: "mailbox"; letters: KeptLetter[] }
  | { type: "rpc_result"; id: string; ok: true; result: unknown }
  | { type: "rpc_result"; id: string; ok: false; error: string }
  /** A request that could not be taken; `requestId` names it when it had an id. */
  | { type: "error"; message: string; requestId?: string };

/** The longest request line the daemon reads; a longer one closes the connection. */
export const MAX_REQUEST_LINE_BYTES = 1024 * 1024;

export interface LineDecoderOptions {
  /** Bytes a line may have (without its newline); default unlimited. */
  maxLineBytes?: number;
  /** Called once when a line grows past maxLineBytes; the decoder ignores everything after it. */
  onTooLong?: () => void;
}

/**
 * Splits a byte stream into JSON values, one per line; a bad line is reported, not fatal. Each
 * byte is scanned once (a long line arriving in many chunks is not rescanned from its start),
 * and a partial line is held as the chunks it came in, joined only once it is complete.
 */
export function lineDecoder(onValue: (v: unknown) => void, onBad: (line: string) => void, opts: LineDecoderOptions = {}): (chunk: Buffer | string) => void {
  const max = opts.maxLineBytes ?? Infinity;
  let parts: Buffer[] = [];
  let pending = 0;
  let overflowed = false;
  const overflow = () => {
    overflowed = true;
    parts = [];
    opts.onTooLong?.();
  };
  const emit = (bytes: Buffer) => {
    const line = bytes.toString("utf8").trim();
    if (!line) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      onBad(line);
      return;
    }
    onValue(value);
  };
  return (chunk) => {
    if (overflowed) return;
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      const piece = buf.subarray(start, nl);
      if (pending + piece.length > max) return overflow();
      const line = parts.length > 0 ? Buffer.concat([...parts, piece]) : piece;
      parts = [];
      pending = 0;
      start = nl + 1;
      emit(line);
      if (overflowed) return;
    }
    if (start < buf.length) {
      pending += buf.length - start;
      if (pending > max) return overflow();
      parts.push(buf.subarray(start));
    }
  };
}
