// The control socket's protocol: JSON lines both ways. Shared by the daemon and the CLI.
import type { CliEvent } from "../channels/cli.ts";
import type { GatewayStatus } from "./status.ts";

export type ClientRequest =
  | { type: "chat"; text: string; requestId?: string }
  /** Ctrl+C: stop the main session's active run. */
  | { type: "abort" }
  | { type: "status" }
  | { type: "rpc"; id: string; method: string; params?: unknown };

export type ServerEvent =
  | CliEvent
  | { type: "accepted"; requestId: string }
  | { type: "status"; status: GatewayStatus }
  | { type: "rpc_result"; id: string; ok: true; result: unknown }
  | { type: "rpc_result"; id: string; ok: false; error: string }
  | { type: "error"; message: string };

/** Splits a byte stream into JSON values, one per line; a bad line is reported, not fatal. */
export function lineDecoder(onValue: (v: unknown) => void, onBad: (line: string) => void): (chunk: Buffer | string) => void {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line) continue;
      try {
        onValue(JSON.parse(line));
      } catch {
        onBad(line);
      }
    }
  };
}
