// Which addresses Hearth's own web_fetch may connect to. Every hop of a fetch is checked here
// and then connected to the very address that was checked (fetch.ts pins it), so a DNS answer
// that changes between check and connect (rebinding) cannot reach a private address.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to its addresses (A and AAAA). Injected by tests so that a name can
 * resolve to 127.0.0.1 without DNS. Rejects when the name does not resolve; never returns [].
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const all = await lookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A fetch target that is not allowed; the message is shown to the model as the tool error. */
export class FetchRefusedError extends Error {
  override name = "FetchRefusedError";
}

/** The host of a URL as compared with `allowPrivate` (lower case, IPv6 without brackets). */
export const hostOf = (url: URL): string => url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");

/** "unicast" for a public address, else the range that makes it private ("loopback", "private", …). */
export function addressRange(address: string): string {
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
  const parsed = ipaddr.process(address);
  return parsed.range();
}

export const isPublicAddress = (address: string): boolean => ipaddr.isValid(address) && addressRange(address) === "unicast";

/**
 * The address to connect to for `url`: a public one, or any when the host is allow-listed.
 * Throws FetchRefusedError for other schemes, for private targets, and when the name does not
 * resolve. A name with several addresses is refused if any of them is private: the address
 * the connection would use must not be a matter of luck.
 */
export async function checkTarget(url: URL, resolve: Resolver, allowPrivate: readonly string[]): Promise<ResolvedAddress> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new FetchRefusedError(`Only http and https URLs can be fetched, not ${url.protocol}`);
  const host = hostOf(url);
  const allowed = allowPrivate.some((h) => h.toLowerCase().replace(/^\[(.*)\]$/, "$1") === host);
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new FetchRefusedError(`The host ${host} could not be resolved (${err instanceof Error ? err.message : String(err)}).`);
    }
    if (addresses.length === 0) throw new FetchRefusedError(`The host ${host} has no address.`);
  }
  if (!allowed) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      const via = bad.address === host ? "" : ` (${host} resolves to ${bad.address})`;
      throw new FetchRefusedError(`Refused: ${url.host} is a ${addressRange(bad.address)} address${via}, not a public one. The owner can allow it in tools.web.fetch.allowPrivate.`);
    }
  }
  return addresses[0]!;
}
