// The dashboard shows a WhatsApp channel waiting for its link: the daemon's real WhatsApp channel
// against the fake at the socket interface, not linked yet (a QR code), and the overview fetched
// over plain HTTP after logging in through a one-time link: the QR code as an SVG image with its
// text (and `hearth status` says where to find it), until the phone approved the link, after
// which the section is gone.
import { join } from "node:path";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { svgQr } from "../../src/channels/qr-code.ts";
import { connectDaemon } from "../../src/cli/client.ts";
import { formatStatus } from "../../src/cli/status.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startFakeWhatsApp, type FakeWhatsApp } from "../support/fake-whatsapp.ts";

let model: FakeModel;
let wa: FakeWhatsApp;
let daemon: Daemon;
let base: string;

function get(path: string, cookie = ""): Promise<{ status: number; cookie: string; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { host: url.host, ...(cookie ? { cookie } : {}) } }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, cookie: String(res.headers["set-cookie"] ?? "").split(";")[0]!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function rpc(method: string): Promise<any> {
  const client = (await connectDaemon(join(daemon.home, "gateway.sock")))!;
  try {
    return method === "status" ? await client.status() : await client.rpc(method, {});
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  model = await startFakeModel();
  wa = await startFakeWhatsApp();
  const home = makeHome({ dashboard: { enabled: true, port: 0 }, channels: { whatsapp: { ownerIds: ["+4917698765432"] } } });
  daemon = await startDaemon(home, { ...wa.env(), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  base = (await rpc("status")).dashboard!;
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  await wa.close();
  await model.close();
});

describe("the dashboard and a WhatsApp channel waiting for its link", () => {
  it("the overview shows the pairing QR code (an SVG, and its text) until the phone approved the link", async () => {
    await waitFor("the device to wait for the phone", () => wa.waitingForLink());
    const link = new URL((await rpc("dashboard.login")).url);
    const login = await get(link.pathname + link.search);
    expect(login.status).toBe(200);
    const cookie = login.cookie;
    let page = "";
    await waitFor("the overview to show the link", async () => (page = (await get("/", cookie)).body).includes('aria-labelledby="link-whatsapp"'));
    const section = page.slice(page.indexOf('<section aria-labelledby="link-whatsapp">'), page.indexOf("</section>", page.indexOf('aria-labelledby="link-whatsapp"')) + 10);
    expect(section).toContain('<h2 id="link-whatsapp">Link WhatsApp</h2>');
    expect(section).toContain("WhatsApp is not linked yet. On the phone with Hearth's number: WhatsApp → Settings → Linked devices → Link a device, and scan this code");
    // The image is the QR code of exactly the text the library gave for the link.
    const svg = (await svgQr("2@fake-qr,fake-key"))!;
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 \d+ \d+".*<\/svg>$/s);
    expect(section).toContain(`<div class="qr" role="img" aria-label="QR code to link WhatsApp">${svg}</div>`);
    expect(section).toContain("The code's text: <code>2@fake-qr,fake-key</code>");
    expect(page).toContain("waiting to be linked (above)");
    // `hearth status` points there.
    expect(formatStatus(await rpc("status")).split("\n")).toContain("  whatsapp   waiting to be linked: scan the QR code on the dashboard's overview (or the log's pairing_qr line)");

    wa.link("4915100000000");
    await waitFor("the channel to run", () => daemon.log().includes('"whatsapp.connected"'));
    page = (await get("/", cookie)).body;
    expect(page).not.toContain("link-whatsapp");
    expect(page).not.toContain("2@fake-qr");
  });
});
