// The dashboard's server over plain HTTP, one fresh server per test (no daemon): who may even
// knock (another user's program replaying the owner's cookie may not), login attempts a hostile
// page can make (an <img> is not counted; its guesses lock only links from elsewhere), the
// lock itself, and the Host names and printed link of a server bound to every address.
import { execFile } from "node:child_process";
import { request } from "node:http";
import { hostname, networkInterfaces } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { DashboardHost } from "../../src/dashboard/host.ts";
import { peerUid } from "../../src/dashboard/peer-user.ts";
import { startDashboard, type DashboardServer } from "../../src/dashboard/server.ts";
import { createLogger } from "../../src/process/log.ts";

let server: DashboardServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function start(host = "127.0.0.1"): Promise<DashboardServer> {
  // The static files need a session but nothing of the gateway: a host nobody calls.
  server = await startDashboard({ host, port: 0, allowRemote: host !== "127.0.0.1", log: createLogger({ level: "silent" }), openHost: () => ({}) as DashboardHost });
  return server;
}

interface Reply {
  status: number;
  body: string;
  cookie: string;
}

/** GET `url`, with `hostHeader` as the Host header when given (the connection still goes to `url`). */
function get(url: string, headers: Record<string, string> = {}, hostHeader?: string): Promise<Reply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: { host: hostHeader ?? u.host, ...headers } }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, cookie: String(res.headers["set-cookie"] ?? "").split(";")[0]! }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** What a browser sends for a link opened from the terminal or typed in. */
const OPENED = { "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
/** What a browser sends for `<img src=…>` on another site. */
const IMAGE_ELSEWHERE = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" };
/** What a browser sends when a link on another site is followed. */
const LINK_ELSEWHERE = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };

describe("who may knock", () => {
  it("finds the user of a connection's other end in the kernel's socket table", () => {
    const table = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:1CFC 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 1",
      "   1: 0100007F:C350 0100007F:1CFC 01 00000000:00000000 00:00000000 00000000  1001        0 2",
    ].join("\n");
    const read = (f: string) => (f.endsWith("tcp") ? table : "");
    expect(peerUid({ remoteAddress: "127.0.0.1", remotePort: 50000, localAddress: "127.0.0.1", localPort: 7420 }, read)).toBe(1001);
    expect(peerUid({ remoteAddress: "::ffff:127.0.0.1", remotePort: 50000, localAddress: "::ffff:127.0.0.1", localPort: 7420 }, read)).toBe(1001);
    expect(peerUid({ remoteAddress: "192.0.2.7", remotePort: 50000, localAddress: "127.0.0.1", localPort: 7420 }, read)).toBeNull();
    expect(peerUid({ remoteAddress: "127.0.0.1", remotePort: 50000, localAddress: "127.0.0.1", localPort: 7420 }, () => { throw new Error("no /proc"); })).toBeNull();
  });

  it.skipIf(process.platform !== "linux" || process.getuid?.() !== 0)("refuses the owner's session cookie replayed by another user's program on this machine", async () => {
    const s = await start();
    const login = await get(s.loginUrl(), OPENED);
    expect(login.status).toBe(200);
    expect(login.cookie).toMatch(new RegExp(`^hearth_session_${new URL(s.url).port}=`));
    const css = `${s.url}static/style.css`;
    expect((await get(css, { cookie: login.cookie })).status).toBe(200);
    // The same request from a program of user nobody (a server on another port got the cookie).
    const asNobody = await new Promise<string>((resolve, reject) =>
      execFile("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", `Cookie: ${login.cookie}`, css], { uid: 65534, gid: 65534 }, (err, out) => (err ? reject(err) : resolve(out))),
    );
    expect(asNobody).toBe("403");
    const fresh = s.loginUrl();
    const nobodyLogin = await new Promise<string>((resolve, reject) => execFile("curl", ["-s", fresh], { uid: 65534, gid: 65534 }, (err, out) => (err ? reject(err) : resolve(out))));
    expect(nobodyLogin).toBe("Refused: this connection comes from another user's program on this machine; the dashboard answers only its owner's.\n");
    expect((await get(css, { cookie: login.cookie })).status).toBe(200);
  });

  it("refuses what another site's page asks for with the owner's cookie unless it is a top-level navigation", async () => {
    const s = await start();
    const { cookie } = await get(s.loginUrl(), OPENED);
    const css = `${s.url}static/style.css`;
    const r = await get(css, { cookie, "sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "style" });
    expect(r.status).toBe(403);
    expect(r.body).toBe("Refused: another site asked for this (Sec-Fetch-Site).\n");
    expect((await get(css, { cookie, "sec-fetch-site": "same-origin", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "style" })).status).toBe(200);
  });
});

describe("request paths", () => {
  it("reads a path that starts with // as a path (an unknown page, here refused for want of a login), never a 500", async () => {
    const s = await start();
    const u = new URL(s.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: "//", headers: { host: u.host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(401);
  });
});

describe("login attempts", () => {
  it("does not count made-up links fired by another site's images, and keeps a real link that came that way", async () => {
    const s = await start();
    for (let i = 0; i < 12; i++) {
      const r = await get(`${s.url}login?token=x${i}`, IMAGE_ELSEWHERE);
      expect(r.status).toBe(403);
      expect(r.body).toBe("A login link works only when opened as a page.\n");
    }
    const link = s.loginUrl();
    expect((await get(link, IMAGE_ELSEWHERE)).status).toBe(403);
    const opened = await get(link, OPENED);
    expect(opened.status).toBe(200);
    expect(opened.cookie).toMatch(/^hearth_session_\d+=[A-Za-z0-9_-]{43}$/);
  });

  it("after ten made-up links followed from other sites, links from elsewhere wait a minute; the printed link opened here still logs in", async () => {
    const s = await start();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await get(`${s.url}login?token=guess${i}`, LINK_ELSEWHERE)).status);
    expect(statuses).toEqual(Array(10).fill(403));
    const locked = await get(s.loginUrl(), LINK_ELSEWHERE);
    expect(locked.status).toBe(429);
    expect(locked.body).toBe("Too many failed logins; wait a minute, then use a new link from `hearth dashboard`.\n");
    expect((await get(s.loginUrl(), OPENED)).status).toBe(200);
  });

  it("after ten made-up links tried from this machine, even a valid link waits", async () => {
    const s = await start();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await get(`${s.url}login?token=guess${i}`)).status);
    expect(statuses).toEqual(Array(10).fill(403));
    const r = await get(s.loginUrl(), OPENED);
    expect(r.status).toBe(429);
    expect(r.body).toBe("Too many failed logins; wait a minute, then use a new link from `hearth dashboard`.\n");
  });
});

const outward = Object.values(networkInterfaces())
  .flatMap((l) => l ?? [])
  .find((a) => a.family === "IPv4" && !a.internal)?.address;

describe.skipIf(!outward)("bound to every address (dashboard.allowRemote)", () => {
  it("prints a link with the machine's address and accepts its addresses and name as Host, nothing else", async () => {
    const s = await start("0.0.0.0");
    const port = new URL(s.url).port;
    expect(s.url).toBe(`http://${outward}:${port}/`);
    expect(s.loginUrl()).toMatch(new RegExp(`^http://${outward!.replace(/\./g, "\\.")}:${port}/login\\?token=`));
    // Reached through the outward address, as another machine would.
    const login = await get(s.loginUrl(), OPENED);
    expect(login.status).toBe(200);
    for (const h of [`${outward}:${port}`, `${hostname()}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`]) {
      expect((await get(`${s.url}static/style.css`, { cookie: login.cookie }, h)).status, h).toBe(200);
    }
    for (const h of [`0.0.0.0.nip.io:${port}`, `evil.example:${port}`, `${outward}:1`]) {
      const r = await get(`${s.url}static/style.css`, { cookie: login.cookie }, h);
      expect(r.status, h).toBe(421);
    }
  });
});
