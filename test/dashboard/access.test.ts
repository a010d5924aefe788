// Who may use the dashboard: a login token buys one session, once; made-up and used tokens are
// refused and counted per source, ten refusals a minute lock that source's logins (and no
// other's); rotate ends every session.
import { describe, expect, it } from "vitest";
import { DashboardAccess, LOGIN_TOKEN_TTL_MS, sameSecret, sessionCookie } from "../../src/dashboard/access.ts";

describe("dashboard access", () => {
  it("a login token buys a session once; the session is found from its cookie", () => {
    const access = new DashboardAccess(() => 1_000);
    const token = access.issueToken();
    const first = access.login(token);
    expect(first.type).toBe("ok");
    const session = first.type === "ok" ? first.session : null;
    expect(access.sessionOf(`other=1; hearth_session_7420=${session!.id}`, "hearth_session_7420")).toEqual(session);
    expect(access.login(token)).toEqual({ type: "refused" });
    expect(access.sessionOf("hearth_session_7420=made-up", "hearth_session_7420")).toBeNull();
    expect(access.sessionOf(undefined, "hearth_session_7420")).toBeNull();
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

  it("refusals from one source lock only that source: a hostile page's guesses leave the printed link working", () => {
    const access = new DashboardAccess(() => 0);
    for (let i = 0; i < 10; i++) expect(access.login(`guess-${i}`, "elsewhere")).toEqual({ type: "refused" });
    expect(access.login(access.issueToken(), "elsewhere")).toEqual({ type: "rate_limited" });
    expect(access.login(access.issueToken(), "local").type).toBe("ok");
    expect(access.login(access.issueToken(), "remote:192.0.2.9").type).toBe("ok");
  });

  it("the session cookie's name holds the port, so two dashboards on one machine keep their own", () => {
    expect(sessionCookie(7420)).toBe("hearth_session_7420");
    const access = new DashboardAccess();
    const s = access.login(access.issueToken());
    const id = s.type === "ok" ? s.session.id : "";
    expect(access.sessionOf(`hearth_session_7421=${id}`, sessionCookie(7420))).toBeNull();
    expect(access.sessionOf(`hearth_session_7421=x; hearth_session_7420=${id}`, sessionCookie(7420))?.id).toBe(id);
  });

  it("rotate ends every session and forgets every unused token", () => {
    const access = new DashboardAccess();
    const a = access.login(access.issueToken());
    const unused = access.issueToken();
    expect(access.rotate()).toBe(1);
    expect(access.sessionOf(`hearth_session_7420=${a.type === "ok" ? a.session.id : ""}`, "hearth_session_7420")).toBeNull();
    expect(access.login(unused)).toEqual({ type: "refused" });
  });

  it("compares secrets whole", () => {
    expect(sameSecret("abc", "abc")).toBe(true);
    expect(sameSecret("abd", "abc")).toBe(false);
    expect(sameSecret("ab", "abc")).toBe(false);
    expect(sameSecret(undefined, "abc")).toBe(false);
  });
});
