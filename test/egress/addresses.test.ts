// The egress policy judges an IPv6 address that carries an IPv4 address (IPv4-compatible,
// IPv4-mapped, IPv4-translated, NAT64, 6to4) by the IPv4 address inside: a kernel, a NAT64
// translator or a 6to4 relay may deliver the packet there.
import { describe, expect, it } from "vitest";
import { addressRange, isPublicAddress, type Resolver } from "../../src/egress/addresses.ts";
import { decideEgress, type Requester } from "../../src/egress/policy.ts";

const noDns: Resolver = async (host) => {
  throw new Error(`no DNS in this test (${host})`);
};

const nobody: Requester = { what: "test", permit: async () => "asked" };
const rules = { allow: [], deny: [], allowPrivate: [], ask: "never" as const, own: [] };
const decide = (url: URL, dns = noDns) => decideEgress({ host: url.hostname, port: 80 }, nobody, rules, dns, new AbortController().signal);

/** The IPv6 forms of `v4` ("a.b.c.d"), each as a URL host would carry it. */
function forms(v4: string): Record<string, string> {
  const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
  const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
  const hi = hex(a, b);
  const lo = hex(c, d);
  return {
    "IPv4-compatible": `::${v4}`,
    "IPv4-compatible, hex": `::${hi}:${lo}`,
    "IPv4-mapped": `::ffff:${v4}`,
    "IPv4-translated": `::ffff:0:${v4}`,
    "NAT64 well-known": `64:ff9b::${v4}`,
    // RFC 8215 local use: the IPv4 address may sit at any RFC 6052 position (/48, /56, /64, /96).
    "NAT64 local-use /96": `64:ff9b:1::${v4}`,
    "NAT64 local-use /48": `64:ff9b:1:${hi}:${c.toString(16)}:${(d << 8).toString(16)}::`,
    "6to4": `2002:${hi}:${lo}::1`,
  };
}

describe("egress policy: IPv6 forms that embed an IPv4 address", () => {
  const cases: Array<[string, string]> = [
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["192.168.0.7", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
  ];
  for (const [v4, range] of cases) {
    for (const [form, v6] of Object.entries(forms(v4))) {
      it(`${form} of ${v4} (${v6}) is refused as ${range}`, async () => {
        expect(addressRange(v6)).toBe(range);
        expect(isPublicAddress(v6)).toBe(false);
        const url = new URL(`http://[${v6}]/latest/meta-data/`);
        expect(await decide(url)).toEqual({ type: "refuse", reason: `${url.hostname.slice(1, -1)} is a ${range} address, not a public one; the owner can allow it in egress.allowPrivate` });
      });
    }
  }

  for (const [form, v6] of Object.entries(forms("8.8.8.8"))) {
    if (form === "NAT64 local-use /48" || form === "NAT64 local-use /96") continue;
    it(`${form} of a public address (${v6}) is allowed`, async () => {
      expect(addressRange(v6)).toBe("unicast");
      const url = new URL(`http://[${v6}]/`);
      expect(await decide(url)).toEqual({ type: "connect", address: { address: url.hostname.slice(1, -1), family: 6 }, by: "open" });
    });
  }

  it("NAT64 local-use is allowed only when every position the prefix may use holds a public address", () => {
    // 8.8.8.8 at /48 (bytes 6,7,9,10), /56 (7,9,10,11), /64 (9–12) and /96 (12–15).
    expect(addressRange("64:ff9b:1:808:8:808:808:808")).toBe("unicast");
    // 8.8.8.8 at /96, but 0.0.0.0 at /48: a translator using a /48 prefix would go elsewhere.
    expect(addressRange("64:ff9b:1::808:808")).toBe("unspecified");
  });

  it("the IPv6 loopback and unspecified addresses keep their own ranges; a plain public IPv6 address is allowed", () => {
    expect([addressRange("::1"), addressRange("::"), addressRange("2606:4700::1111")]).toEqual(["loopback", "unspecified", "unicast"]);
  });

  it("a name that resolves to an IPv4-compatible loopback address is refused", async () => {
    const dns: Resolver = async () => [{ address: "::7f00:1", family: 6 }];
    expect(await decide(new URL("http://sneaky.test/"), dns)).toEqual({ type: "refuse", reason: "sneaky.test is a loopback address (sneaky.test resolves to ::7f00:1), not a public one; the owner can allow it in egress.allowPrivate" });
  });
});
