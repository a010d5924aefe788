// Which user's program is at the other end of a connection from this machine. Browsers send a
// cookie of 127.0.0.1 to every port of 127.0.0.1, so another user's server the owner visits
// receives the session cookie; replayed from that user's program it must buy nothing. On Linux
// the kernel's socket table (/proc/net/tcp, tcp6) names the user owning each socket, the peer's
// too when it runs here; a connection from another machine is not in it.
import { readFileSync } from "node:fs";
import { endianness } from "node:os";
import ipaddr from "ipaddr.js";

export interface ConnectionEnds {
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
}

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];

/**
 * The uid owning the peer's socket of `conn`, or null when it cannot be told: the peer is on
 * another machine, or the system has no /proc socket table (macOS). `read` returns a table's
 * text or throws (tests pass their own).
 */
export function peerUid(conn: ConnectionEnds, read: (file: string) => string = (f) => readFileSync(f, "utf8")): number | null {
  const peer = endpoint(conn.remoteAddress, conn.remotePort);
  const self = endpoint(conn.localAddress, conn.localPort);
  if (!peer || !self) return null;
  for (const file of TABLES) {
    let text: string;
    try {
      text = read(file);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st queues timer retrnsmt uid …: the peer's own socket has the peer as its local end.
      if (f.length < 8) continue;
      if (sameEnd(f[1]!, peer) && sameEnd(f[2]!, self)) return Number(f[7]);
    }
  }
  return null;
}

interface Endpoint {
  address: string;
  port: number;
}

function endpoint(address: string | undefined, port: number | undefined): Endpoint | null {
  if (!address || !port || !ipaddr.isValid(address)) return null;
  return { address: ipaddr.process(address).toString(), port };
}

/** A table's `0100007F:1CFC` against an address and port (IPv4-mapped IPv6 counts as IPv4). */
function sameEnd(hex: string, end: Endpoint): boolean {
  const [addr, port] = hex.split(":");
  if (!addr || !port || Number.parseInt(port, 16) !== end.port) return false;
  const bytes = tableBytes(addr);
  return bytes !== null && ipaddr.process(ipaddr.fromByteArray(bytes).toString()).toString() === end.address;
}

/** The kernel writes each 32-bit word of an address in the machine's byte order. */
function tableBytes(hex: string): number[] | null {
  if (hex.length !== 8 && hex.length !== 32) return null;
  const out: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => Number.parseInt(hex.slice(w + i, w + i + 2), 16));
    out.push(...(endianness() === "LE" ? word.reverse() : word));
  }
  return out.some(Number.isNaN) ? null : out;
}
