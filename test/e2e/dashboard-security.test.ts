// The dashboard's doors over plain HTTP, against the real daemon: nothing without the session
// cookie a one-time link buys, a foreign Host header is refused (DNS rebinding), a
// state-changing request needs the page's Origin and CSRF token, and `--rotate` ends sessions.
// The pages in a real browser: dashboard.test.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon } from "../../src/cli/client.ts";
import { hearthCmd } from "../../src/process/hearth-command.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon;
let base: string;
let host: string;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request, so the Host and Origin headers are exactly the test's. */
function http(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: { host, ...headers } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** What `hearth dashboard --url` prints, asked over the control socket in-process (a CLI process costs seconds). */
async function loginUrl(): Promise<string> {
  const client = (await connectDaemon(join(daemon.home, "gateway.sock")))!;
  try {
    return ((await client.rpc("dashboard.login", {})) as { url: string }).url;
  } finally {
    await client.close();
  }
}

/** Logs in through a fresh link; the session cookie and the page's CSRF token. */
async function login(): Promise<{ cookie: string; csrf: string }> {
  const link = new URL(await loginUrl());
  const r = await http("GET", link.pathname + link.search);
  expect(r.status).toBe(200);
  const cookie = String(r.headers["set-cookie"]).split(";")[0]!;
  const page = await http("GET", "/", { cookie });
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf };
}

const jobs = () => JSON.parse(readFileSync(join(daemon.home, "cron", "jobs.json"), "utf8")) as { jobs: unknown[] };
const jobsText = () => {
  try {
    return readFileSync(join(daemon.home, "cron", "jobs.json"), "utf8");
  } catch {
    return "";
  }
};

beforeAll(async () => {
  fake = await startFakeModel();
  daemon = await startDaemon(makeHome({ dashboard: { enabled: true, port: 0 } }), { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  const client = (await connectDaemon(join(daemon.home, "gateway.sock")))!;
  base = (await client.status()).dashboard!;
  await client.close();
  host = new URL(base).host;
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  await fake.close();
});

describe("dashboard security (plain HTTP)", () => {
  it("prints the address in `hearth status` and a one-time link with `hearth dashboard`", async () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const text = await daemon.hearth(["status"]);
    expect(text.stdout).toContain(`Dashboard: ${base} (\`${hearthCmd("dashboard")}\` prints a login link)`);
    const r = await daemon.hearth(["dashboard"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${base.replace(/[./]/g, "\\$&")}login\\?token=[A-Za-z0-9_-]{43}\\nThe link logs in once and works for 10 minutes; keep it to yourself\\.\\n$`));
  });

  it("answers every page, file and action without a session cookie with 401 and no data", async () => {
    for (const [method, path] of [["GET", "/"], ["GET", "/memory?file=USER.md"], ["GET", "/usage"], ["GET", "/static/app.js"], ["GET", "/api/logs/stream"], ["POST", "/api/schedule/save"]] as const) {
      const r = await http(method, path, { cookie: "hearth_session=made-up" });
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.body).toBe("Not logged in. Run `hearth dashboard` on the machine Hearth runs on for a login link.\n");
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    }
    const page = await http("GET", "/", { cookie: (await login()).cookie });
    expect(page.headers["access-control-allow-origin"]).toBeUndefined();
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  });

  it("refuses a Host header that is not the dashboard's (DNS rebinding), even with a valid session", async () => {
    const { cookie } = await login();
    const port = new URL(base).port;
    for (const h of [`evil.example:${port}`, "127.0.0.1:1", `127.0.0.1.nip.io:${port}`]) {
      const r = await new Promise<Reply>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, path: "/", headers: { host: h, cookie } }, (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        });
        req.on("error", reject);
        req.end();
      });
      expect(r.status, h).toBe(421);
      expect(r.body).toBe("This address is not the dashboard's (Host header refused).\n");
    }
    const ok = await new Promise<number>((resolve) => request({ host: "127.0.0.1", port, path: "/", headers: { host: `localhost:${port}`, cookie } }, (res) => resolve(res.statusCode ?? 0)).end());
    expect(ok).toBe(200);
  });

  it("sets an HttpOnly SameSite=Strict cookie, and refuses a login link used twice", async () => {
    const link = new URL(await loginUrl());
    const first = await http("GET", link.pathname + link.search);
    expect(first.status).toBe(200);
    expect(String(first.headers["set-cookie"])).toMatch(new RegExp(`^hearth_session_${new URL(base).port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`));
    const second = await http("GET", link.pathname + link.search);
    expect(second.status).toBe(403);
    expect(second.headers["set-cookie"]).toBeUndefined();
    expect(second.body).toBe("This login link was used already or has expired. Run `hearth dashboard` for a new one.\n");
  });

  it("refuses a POST with a foreign Origin, no Origin or no CSRF token with 403, and changes nothing", async () => {
    const { cookie, csrf } = await login();
    const before = jobsText();
    const count = before ? jobs().jobs.length : 0;
    const job = JSON.stringify({ name: "Evil", kind: "every", when: "1h", message: "exfiltrate", session: "isolated", deliver: "owner" });
    const json = { cookie, "content-type": "application/json" };
    const cases: Array<[Record<string, string>, string]> = [
      [{ ...json, origin: "http://evil.example", "x-csrf-token": csrf }, "Refused: the request did not come from the dashboard's own pages (Origin).\n"],
      [{ ...json, "x-csrf-token": csrf }, "Refused: the request did not come from the dashboard's own pages (Origin).\n"],
      [{ ...json, origin: `http://${host}` }, "Refused: the request lacks the dashboard's CSRF token. Reload the page.\n"],
      [{ ...json, origin: `http://${host}`, "x-csrf-token": "x".repeat(43) }, "Refused: the request lacks the dashboard's CSRF token. Reload the page.\n"],
    ];
    for (const [headers, message] of cases) {
      const r = await http("POST", "/api/schedule/save", headers, job);
      expect(r.status).toBe(403);
      expect(r.body).toBe(message);
    }
    expect(jobsText()).toBe(before);
    // The same request from the page itself goes through.
    const ok = await http("POST", "/api/schedule/save", { ...json, origin: `http://${host}`, "x-csrf-token": csrf }, job);
    expect(ok.status).toBe(200);
    expect(jobs().jobs).toHaveLength(count + 1);
  });

  it("`hearth dashboard --rotate` ends every session", async () => {
    const { cookie } = await login();
    expect((await http("GET", "/", { cookie })).status).toBe(200);
    const r = await daemon.hearth(["dashboard", "--rotate"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Ended \d+ dashboard sessions? and every unused login link\. `(npx )?hearth dashboard` prints a new link\.\n$/);
    expect((await http("GET", "/", { cookie })).status).toBe(401);
  });
});
