// The egress policy's order: deny, then a private address literal (refused without asking), then
// allow, then the requester's permit — before any name is looked up — then the resolved address.
import { describe, expect, it } from "vitest";
import type { Resolver } from "../../src/egress/addresses.ts";
import { decideEgress, hostPatternMatches, type EgressRules, type Requester } from "../../src/egress/policy.ts";

const signal = new AbortController().signal;
const rules = (r: Partial<EgressRules> = {}): EgressRules => ({ allow: [], deny: [], allowPrivate: [], ask: "tainted", own: [], ...r });

function fakeDns(map: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = (async (host: string) => {
    asked.push(host);
    if (!map[host]) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    return map[host]!.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
  }) as Resolver & { asked: string[] };
  resolve.asked = asked;
  return resolve;
}

function requester(answer: string | null): Requester & { permits: string[] } {
  const permits: string[] = [];
  return { what: "exec: test", permits, permit: async (d, mode) => (permits.push(`${d.host}:${d.port} ${mode}`), answer) };
}

describe("host patterns", () => {
  it("match a name, names under a wildcard (not the domain itself), an address in any spelling, and a port when given", () => {
    const at = (host: string, port = 443) => ({ host, port });
    expect(hostPatternMatches("example.com", at("example.com"))).toBe(true);
    expect(hostPatternMatches("example.com", at("api.example.com"))).toBe(false);
    expect(hostPatternMatches("*.example.com", at("api.example.com"))).toBe(true);
    expect(hostPatternMatches("*.example.com", at("example.com"))).toBe(false);
    expect(hostPatternMatches("*.example.com", at("evilexample.com"))).toBe(false);
    expect(hostPatternMatches("example.com:8443", at("example.com", 8443))).toBe(true);
    expect(hostPatternMatches("example.com:8443", at("example.com", 443))).toBe(false);
    expect(hostPatternMatches("::1", at("0:0:0:0:0:0:0:1"))).toBe(true);
    expect(hostPatternMatches("[::1]:80", at("::1", 80))).toBe(true);
    expect(hostPatternMatches("Example.COM.", at("example.com"))).toBe(true);
  });
});

describe("decideEgress", () => {
  it("asks before resolving: a refused permit means the name is never looked up", async () => {
    const dns = fakeDns({ "c2VjcmV0.attacker.example": ["93.184.216.34"] });
    const r = requester("the owner denied c2vjcmv0.attacker.example");
    expect(await decideEgress({ host: "c2VjcmV0.attacker.example", port: 443 }, r, rules(), dns, signal)).toEqual({ type: "refuse", reason: "the owner denied c2vjcmv0.attacker.example" });
    expect(r.permits).toEqual(["c2vjcmv0.attacker.example:443 tainted"]);
    expect(dns.asked).toEqual([]);
  });

  it("deny wins over allow; allow connects without a permit; never asks nobody", async () => {
    const dns = fakeDns({ "example.com": ["93.184.216.34"] });
    const r = requester("no");
    expect(await decideEgress({ host: "example.com", port: 443 }, r, rules({ allow: ["example.com"], deny: ["*.com"] }), dns, signal)).toEqual({ type: "refuse", reason: "example.com is listed in egress.deny" });
    expect(await decideEgress({ host: "example.com", port: 443 }, r, rules({ allow: ["example.com"] }), dns, signal)).toEqual({ type: "connect", address: { address: "93.184.216.34", family: 4 }, by: "allow" });
    expect(await decideEgress({ host: "example.com", port: 443 }, r, rules({ ask: "never" }), dns, signal)).toEqual({ type: "connect", address: { address: "93.184.216.34", family: 4 }, by: "open" });
    expect(r.permits).toEqual([]);
    expect(await decideEgress({ host: "example.com", port: 443 }, requester(null), rules({ ask: "always" }), dns, signal)).toEqual({ type: "connect", address: { address: "93.184.216.34", family: 4 }, by: "permit" });
  });

  it("a private address literal is refused without asking; a name is refused when any of its addresses is private, unless allowPrivate lists it", async () => {
    const r = requester(null);
    expect(await decideEgress({ host: "169.254.169.254", port: 80 }, r, rules(), fakeDns({}), signal)).toEqual({
      type: "refuse",
      reason: "169.254.169.254 is a linkLocal address, not a public one; the owner can allow it in egress.allowPrivate",
    });
    expect(r.permits).toEqual([]);
    const dns = fakeDns({ "rebind.test": ["93.184.216.34", "127.0.0.1"] });
    expect(await decideEgress({ host: "rebind.test", port: 80 }, r, rules(), dns, signal)).toEqual({
      type: "refuse",
      reason: "rebind.test is a loopback address (rebind.test resolves to 127.0.0.1), not a public one; the owner can allow it in egress.allowPrivate",
    });
    expect(await decideEgress({ host: "rebind.test", port: 80 }, r, rules({ allowPrivate: ["rebind.test"] }), dns, signal)).toEqual({ type: "connect", address: { address: "93.184.216.34", family: 4 }, by: "permit" });
  });

  it("refuses what is no destination: a host with spaces or slashes, port 0", async () => {
    const r = requester(null);
    expect(await decideEgress({ host: "evil.example/x y", port: 80 }, r, rules(), fakeDns({}), signal)).toEqual({ type: "refuse", reason: '"evil.example/x y" is not a host name or address' });
    expect(await decideEgress({ host: "example.com", port: 0 }, r, rules(), fakeDns({}), signal)).toEqual({ type: "refuse", reason: "port 0 is not a port" });
  });
});
