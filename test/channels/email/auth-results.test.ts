import { describe, expect, it } from "vitest";
import { parseAuthenticationResults, vouchedFor } from "../../../src/channels/email/auth-results.ts";

describe("reading an Authentication-Results header", () => {
  it("reads the authserv-id, each method's result and its properties, without the comments", () => {
    expect(parseAuthenticationResults("mx.google.com;\r\n       dkim=pass header.i=@owner.test header.s=s1 header.b=abc;\r\n       spf=pass (google.com: domain of ann@owner.test designates 1.2.3.4 as permitted sender) smtp.mailfrom=ann@owner.test;\r\n       dmarc=pass (p=NONE) header.from=owner.test")).toEqual({
      authservId: "mx.google.com",
      results: [
        { method: "dkim", result: "pass", props: { "header.i": "@owner.test", "header.s": "s1", "header.b": "abc" } },
        { method: "spf", result: "pass", props: { "smtp.mailfrom": "ann@owner.test" } },
        { method: "dmarc", result: "pass", props: { "header.from": "owner.test" } },
      ],
    });
  });

  it("reads a version, `none`, quoted values and spaces around =", () => {
    expect(parseAuthenticationResults('mx.test 1; none')).toEqual({ authservId: "mx.test", results: [] });
    expect(parseAuthenticationResults('mx.test; dkim = pass header.d = "owner.test"')).toEqual({ authservId: "mx.test", results: [{ method: "dkim", result: "pass", props: { "header.d": "owner.test" } }] });
  });

  it("does not read a header that breaks the grammar (fails closed)", () => {
    expect(parseAuthenticationResults("spf=pass (sender IP is 1.2.3.4) smtp.mailfrom=owner.test; dkim=pass header.d=owner.test")).toBeNull();
    expect(parseAuthenticationResults("mx.test; dkim=pass (unclosed comment header.d=owner.test")).toBeNull();
    expect(parseAuthenticationResults("mx.test; dkim=pass header.d")).toBeNull();
  });
});

describe("whether the owner's server vouched for a sender", () => {
  const ours = "mx.test; dkim=pass header.d=owner.test; spf=fail smtp.mailfrom=x@elsewhere.test";
  it("trusts DKIM or SPF passing for the sender's own domain in the configured server's header", () => {
    expect(vouchedFor([ours], "mx.test", "ann@owner.test")).toEqual({ ok: true, by: "dkim=pass for owner.test" });
    expect(vouchedFor(["MX.TEST; spf=pass smtp.mailfrom=bounce@owner.test"], "mx.test", "ann@owner.test")).toEqual({ ok: true, by: "spf=pass for owner.test" });
  });

  it("does not trust a pass for another domain, or a subdomain", () => {
    expect(vouchedFor(["mx.test; dkim=pass header.d=evil.test; spf=pass smtp.mailfrom=a@evil.test"], "mx.test", "ann@owner.test").ok).toBe(false);
    expect(vouchedFor(["mx.test; dkim=pass header.d=owner.test.evil.test"], "mx.test", "ann@owner.test").ok).toBe(false);
    expect(vouchedFor(["mx.test; dkim=pass header.d=mail.owner.test"], "mx.test", "ann@owner.test").ok).toBe(false);
  });

  it("judges the domain that signed (header.d), never header.i: an agent of the owner's domain in another domain's signature vouches for nothing", () => {
    expect(vouchedFor(["mx.test; dkim=pass header.d=evil.test header.i=ann@owner.test"], "mx.test", "ann@owner.test")).toEqual({ ok: false, why: "mx.test did not see DKIM or SPF pass for owner.test" });
    expect(vouchedFor(["mx.test; dkim=pass header.i=@owner.test"], "mx.test", "ann@owner.test").ok).toBe(false);
    expect(vouchedFor(["mx.test; dkim=pass header.d=owner.test header.i=@evil.test"], "mx.test", "ann@owner.test")).toEqual({ ok: true, by: "dkim=pass for owner.test" });
  });

  it("reads only the topmost header of the configured server: a sender's forged one below it counts for nothing", () => {
    const forgedBelow = "mx.test; dkim=pass header.d=owner.test";
    expect(vouchedFor(["mx.test; dkim=none; spf=fail smtp.mailfrom=a@evil.test", forgedBelow], "mx.test", "ann@owner.test")).toEqual({ ok: false, why: "mx.test did not see DKIM or SPF pass for owner.test" });
  });

  it("ignores other servers' headers, and needs a configured server", () => {
    expect(vouchedFor(["mx.evil.test; dkim=pass header.d=owner.test"], "mx.test", "ann@owner.test")).toEqual({ ok: false, why: "no Authentication-Results header from mx.test" });
    expect(vouchedFor(["mx.evil.test; dkim=pass header.d=owner.test", ours], "mx.test", "ann@owner.test").ok).toBe(true);
    expect(vouchedFor([ours], null, "ann@owner.test")).toEqual({ ok: false, why: "no authservId is configured" });
    expect(vouchedFor([], "mx.test", "ann@owner.test").ok).toBe(false);
  });

  it("stops at a header that does not read: it may be the configured server's", () => {
    expect(vouchedFor(["mx.test; dkim=pass (broken", ours], "mx.test", "ann@owner.test")).toEqual({ ok: false, why: "an Authentication-Results header does not read" });
  });

  it("takes no result but pass", () => {
    for (const result of ["fail", "neutral", "softfail", "temperror", "permerror", "policy", "none"]) {
      expect(vouchedFor([`mx.test; dkim=${result} header.d=owner.test; spf=${result} smtp.mailfrom=a@owner.test`], "mx.test", "ann@owner.test").ok, result).toBe(false);
    }
  });
});
