// The egress policy: the one place that decides whether a connection made on the model's behalf
// may leave — a sandboxed command's (through the proxy, proxy.ts), `web_fetch`'s, a stdio MCP
// server's. It is decided on the destination as the connecting side named it and then on the
// address the name resolves to here, which is the address connected to (no second lookup, so a
// name cannot rebind between check and connect).
//
// Order: `egress.deny` refuses; `egress.allow` passes without a question; otherwise `egress.ask`
// decides whether the requester must obtain the owner's yes (a grant or a press) — and it is
// asked BEFORE the name is resolved, since a lookup of `<data>.attacker.example` already carries
// data out. Last, an address in a private range (loopback, private, link-local, carrier-grade
// NAT, multicast, cloud metadata) is refused unless the host is in `egress.allowPrivate`.
import ipaddr from "ipaddr.js";
import { addressRange, isPublicAddress, type ResolvedAddress, type Resolver } from "./addresses.ts";

export const askModes = ["tainted", "always", "never"] as const;
export type AskMode = (typeof askModes)[number];

/** `config.egress`, as the schema outputs it. */
export interface EgressRules {
  /** Host patterns (`example.com`, `*.example.com`, with an optional `:port`) that always pass. */
  allow: readonly string[];
  /** Host patterns that are always refused, whatever else says. */
  deny: readonly string[];
  /** Hosts (names or addresses) that may be reached although they resolve to a private address. */
  allowPrivate: readonly string[];
  /** tainted: a run that took in outside content asks for each new host; always: every new host asks; never: none asks. */
  ask: AskMode;
  /**
   * The owner's own destinations (`egress.own`, and the SSH exec hosts): what they answer is the
   * owner's, so it does not taint the run that reads it. Every other answer does, allowed or not.
   */
  own: readonly string[];
}

/** Where a connection goes, as the connecting side named it: a host name or an address, and a port. */
export interface Destination {
  host: string;
  port: number;
}

/**
 * Who wants a connection: a command, a tool call, an extension's process. The policy calls
 * `permit` only for a destination its rules leave open and whose mode needs a decision.
 */
export interface Requester {
  /** What connects, as the owner is shown it: "exec: curl https://…", "web_fetch https://…", "MCP server github". */
  what: string;
  /**
   * Decides a destination that neither list settles. `mode` "tainted": the requester asks the
   * owner (or finds a grant) when what it serves holds outside content, and passes otherwise;
   * "always": it asks unless a grant covers the host. Resolves null to connect, or the refusal
   * said to the connecting program. May wait for the owner for minutes; resolves soon after
   * `signal` aborts; never rejects.
   */
  permit(dest: Destination, mode: "tainted" | "always", signal: AbortSignal): Promise<string | null>;
  /**
   * A connection to `dest`, not one of the owner's own (EgressRules.own), is open: from now on
   * whatever it answers reaches the requester. Called before the first byte is relayed back, so
   * the run is tainted before the program can read it. Must not throw. Absent: nobody to taint
   * (an MCP server: its results taint the run that reads them).
   */
  tookIn?(dest: Destination): void;
}

export type EgressDecision =
  | { type: "connect"; address: ResolvedAddress; by: "allow" | "permit" | "open" }
  | { type: "refuse"; reason: string };

/** The host as compared with the lists: lower case, IPv6 without brackets, no trailing dot. */
export function normalHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
}

/** A host name (letters, digits, hyphens, dots, underscores) or an IP address; anything else is no destination. */
export function isValidHost(host: string): boolean {
  if (ipaddr.isValid(host)) return true;
  return host.length > 0 && host.length <= 253 && /^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/.test(host);
}

/**
 * Whether `pattern` covers `dest`: `example.com` that host, `*.example.com` any name under it
 * (not example.com itself), an address that address; `:port` limits it to one port.
 */
export function hostPatternMatches(pattern: string, dest: Destination): boolean {
  const m = /^(\[[^\]]+\]|[^:]+|[0-9a-f:]+)(?::(\d+))?$/i.exec(pattern.trim());
  // A bare IPv6 address holds colons: read it whole when it parses as one.
  const whole = normalHost(pattern);
  const [hostPart, port] = ipaddr.isValid(whole) ? [whole, undefined] : m ? [normalHost(m[1]!), m[2]] : [whole, undefined];
  if (port !== undefined && Number(port) !== dest.port) return false;
  const host = normalHost(dest.host);
  if (hostPart.startsWith("*.")) return host.endsWith(hostPart.slice(1)) && host.length > hostPart.length - 1;
  if (ipaddr.isValid(hostPart) && ipaddr.isValid(host)) return ipaddr.parse(hostPart).toNormalizedString() === ipaddr.parse(host).toNormalizedString();
  return hostPart === host;
}

/** Whether `dest` is one of the owner's own destinations, whose answers do not taint. */
export const isOwnDestination = (rules: EgressRules, dest: Destination): boolean => rules.own.some((p) => hostPatternMatches(p, { host: normalHost(dest.host), port: dest.port }));

/** `127.0.0.1:8080`, `[::1]:443`: a destination as questions and taint clauses name it. */
export const destinationName = (dest: Destination): string => `${dest.host.includes(":") ? `[${dest.host}]` : dest.host}:${dest.port}`;

const listed = (patterns: readonly string[], dest: Destination) => patterns.some((p) => hostPatternMatches(p, dest));

/**
 * Decides one connection. `rules` is read at each call (a reloaded config applies to the next
 * connection). Never rejects: a name that does not resolve is a refusal.
 */
export async function decideEgress(dest: Destination, requester: Requester, rules: EgressRules, resolve: Resolver, signal: AbortSignal): Promise<EgressDecision> {
  const host = normalHost(dest.host);
  const target = { host, port: dest.port };
  if (!isValidHost(host)) return { type: "refuse", reason: `"${dest.host.slice(0, 100)}" is not a host name or address` };
  if (!Number.isInteger(dest.port) || dest.port < 1 || dest.port > 65_535) return { type: "refuse", reason: `port ${dest.port} is not a port` };
  if (listed(rules.deny, target)) return { type: "refuse", reason: `${host} is listed in egress.deny` };
  const privateOk = rules.allowPrivate.some((h) => hostPatternMatches(h, target));
  // An address is judged before anyone is asked: nobody is asked about what is refused anyway.
  if (ipaddr.isValid(host) && !privateOk && !isPublicAddress(host)) return refusePrivate(host, host);
  let by: "allow" | "permit" | "open" = "open";
  if (listed(rules.allow, target)) by = "allow";
  else if (rules.ask !== "never") {
    const refusal = await requester.permit(target, rules.ask, signal);
    if (refusal !== null) return { type: "refuse", reason: refusal };
    by = "permit";
  }
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      return { type: "refuse", reason: `${host} could not be resolved (${err instanceof Error ? err.message : String(err)})` };
    }
    if (addresses.length === 0) return { type: "refuse", reason: `${host} has no address` };
  }
  // Several addresses: refused if any is private, so the address used is never a matter of luck.
  const bad = privateOk ? undefined : addresses.find((a) => !isPublicAddress(a.address));
  if (bad) return refusePrivate(host, bad.address);
  return { type: "connect", address: addresses[0]!, by };
}

function refusePrivate(host: string, address: string): EgressDecision {
  const via = address === host ? "" : ` (${host} resolves to ${address})`;
  return { type: "refuse", reason: `${host} is a ${addressRange(address)} address${via}, not a public one; the owner can allow it in egress.allowPrivate` };
}
