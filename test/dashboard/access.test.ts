// Who may use the dashboard: a login token buys one session, once; made-up and used tokens are
// refused and counted, ten refusals a minute lock logins; rotate ends every session.
import { describe, expect, it } from "vitest";
import { DashboardAccess, LOGIN_TOKEN_TTL_MS, sameSecret } from "../../src/dashboard/access.ts";

describe("dashboard access", () => {
  it("a login token buys a session once; the session is found from its cookie", () => {
    const access = new DashboardAccess(() => 1_000);
    const token = access.issueToken();
    const first = access.login(token);
    expect(first.type).toBe("ok");
    const session = first.type === "ok" ? first.session : null;
    expect(access.sessionOf(`other=1; hearth_session=${session!.id}`)).toEqual(session);
    expect(access.login(token)).toEqual({ type: "refused" });
    expect(access.sessionOf("hearth_session=made-up")).toBeNull();
    expect(access.sessionOf(undefined)).toBeNull();
  });

  it("an expired token is refused", () => {
    let now = 0;
    const access = new DashboardAccess(() => now);
    const token = access.issueToken();
    now = LOGIN_TOKEN_TTL_MS;
    expect(access.login(token)).toEqual({ type: "refused" });
  });

  it("ten refusals within a minute lock logins until the minute has passed", () => {
    let now = 0;
    const access = new DashboardAccess(() => now);
    for (let i = 0; i < 10; i++) expect(access.login(`guess-${i}`)).toEqual({ type: "refused" });
    const token = access.issueToken();
    expect(access.login(token)).toEqual({ type: "rate_limited" });
    now = 60_001;
    expect(access.login(token).type).toBe("ok");
  });

  it("rotate ends every session and forgets every unused token", () => {
    const access = new DashboardAccess();
    const a = access.login(access.issueToken());
    const unused = access.issueToken();
    expect(access.rotate()).toBe(1);
    expect(access.sessionOf(`hearth_session=${a.type === "ok" ? a.session.id : ""}`)).toBeNull();
    expect(access.login(unused)).toEqual({ type: "refused" });
  });

  it("compares secrets whole", () => {
    expect(sameSecret("abc", "abc")).toBe(true);
    expect(sameSecret("abd", "abc")).toBe(false);
    expect(sameSecret("ab", "abc")).toBe(false);
    expect(sameSecret(undefined, "abc")).toBe(false);
  });
});
