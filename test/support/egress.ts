// An egress policy for tests of one tool: the rules given (default: nothing listed, nobody
// asked), DNS faked when a resolver is given, and every connection kept for assertions.
import type { Resolver } from "../../src/egress/addresses.ts";
import { Egress, type EgressRecord, type EgressRules, type Requester } from "../../src/egress/egress.ts";
import { silentLogger } from "../../src/process/log.ts";

/** `socat`: the relay for tunnels, as Egress takes it (default: found on PATH; null: Node's pipes). */
export function testEgress(rules: Partial<EgressRules> = {}, resolve?: Resolver, socat?: string | null): Egress & { records: EgressRecord[] } {
  const records: EgressRecord[] = [];
  const full: EgressRules = { allow: [], deny: [], allowPrivate: [], ask: "never", own: [], ...rules };
  const egress = new Egress({ rules: () => full, record: (r) => records.push(r), log: silentLogger, ...(resolve ? { resolve } : {}), ...(socat !== undefined ? { socat } : {}) });
  return Object.assign(egress, { records });
}

/** A requester nobody can be asked for (an MCP server's in a test): the rules alone decide, an open host passes under "tainted". */
export function unattendedRequester(what: string, session: string): Requester & { session: string } {
  return { what, session, permit: async (dest, mode) => (mode === "tainted" ? null : `${dest.host} is not in egress.allow, and nobody can be asked here`) };
}
