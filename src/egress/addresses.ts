// What kind of address a connection would reach: public ("unicast") or one of the private
// ranges (loopback, private, link-local, carrier-grade NAT, multicast, cloud metadata's
// link-local, …), IPv6 forms that carry an IPv4 address judged by the address inside. The egress
// policy (policy.ts) refuses the private ones unless the owner listed the host.
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

/**
 * "unicast" for a public address, else the range that makes it private ("loopback", "private",
 * …). An IPv6 address that carries an IPv4 address is judged by the IPv4 address inside (see
 * embeddedIPv4s): the kernel, a NAT64 translator or a 6to4 relay may deliver it there.
 */
export function addressRange(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range();
  const own = parsed.range();
  if (own === "loopback" || own === "unspecified") return own;
  const inside = embeddedIPv4s(parsed as ipaddr.IPv6);
  if (inside.length === 0) return own;
  // A name for the reader: the most telling private range among the candidates (a NAT64
  // local-use address has zeros at the positions its prefix does not use).
  const ranges = inside.map((v4) => v4.range()).filter((r) => r !== "unicast");
  return ranges.find((r) => r !== "unspecified") ?? ranges[0] ?? "unicast";
}

const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");
const NAT64_LOCAL_USE = ipaddr.parseCIDR("64:ff9b:1::/48");
const SIX_TO_FOUR = ipaddr.parseCIDR("2002::/16");

/**
 * The IPv4 addresses an IPv6 address may lead to; [] for a native IPv6 address.
 * - IPv4-compatible `::a.b.c.d` (deprecated, but Linux still routes ::127.0.0.1 to loopback),
 *   IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d` and NAT64's well-known
 *   `64:ff9b::a.b.c.d`: the last 32 bits.
 * - NAT64 local use `64:ff9b:1::/48` (RFC 8215): the operator picks the prefix length, so every
 *   RFC 6052 position a /48 or longer prefix may use (48, 56, 64, 96 bits; bits 64–71 skipped).
 * - 6to4 `2002:AABB:CCDD::/48`: bits 16–47.
 */
export function embeddedIPv4s(v6: ipaddr.IPv6): ipaddr.IPv4[] {
  const b = v6.toByteArray();
  const v4 = (...at: number[]) => new ipaddr.IPv4(at.map((i) => b[i]!));
  const last32 = () => v4(12, 13, 14, 15);
  if (b.slice(0, 10).every((x) => x === 0)) {
    const mid = (b[10]! << 8) | b[11]!;
    if (mid === 0 || mid === 0xffff) return [last32()];
  }
  if (b.slice(0, 8).every((x) => x === 0) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return [last32()];
  if (v6.match(NAT64_WELL_KNOWN)) return [last32()];
  if (v6.match(NAT64_LOCAL_USE)) return [v4(6, 7, 9, 10), v4(7, 9, 10, 11), v4(9, 10, 11, 12), last32()];
  if (v6.match(SIX_TO_FOUR)) return [v4(2, 3, 4, 5)];
  return [];
}

export const isPublicAddress = (address: string): boolean => ipaddr.isValid(address) && addressRange(address) === "unicast";
