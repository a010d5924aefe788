// Hearth's own web_fetch against a local HTTP server: extraction, redirects, caps, timeouts,
// and the SSRF guard. No test touches DNS or the internet: names resolve through an injected resolver.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext, ToolOutput } from "../../../../src/agent/tool.ts";
import { fetchUrl } from "../../../../src/agent/tools/web/fetch.ts";
import type { Resolver } from "../../../../src/egress/addresses.ts";
import { testEgress } from "../../../support/egress.ts";
import { createWebFetchTool, type WebFetchToolOptions } from "../../../../src/agent/tools/web/tools.ts";
import { silentLogger } from "../../../../src/process/log.ts";
import { startLocalWeb, tinyPdf, type LocalWeb } from "../../../support/web-fixtures.ts";

let web: LocalWeb;
beforeEach(async () => {
  web = await startLocalWeb();
});
afterEach(async () => {
  await web.close();
});

const ctx = (signal = new AbortController().signal): ToolContext => ({ signal, workspace: "/nonexistent", scope: "main", sessionKey: "test", log: silentLogger });

/** Maps names to addresses; any other name fails as DNS would. Counts lookups. */
function fakeDns(map: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (async (host: string) => {
    calls.push(host);
    const addrs = map[host];
    if (!addrs) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    return addrs.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  }) as Resolver & { calls: string[] };
  resolve.calls = calls;
  return resolve;
}

function tool(opts: Partial<WebFetchToolOptions> & { allowPrivate?: string[]; resolve?: Resolver } = {}) {
  const { allowPrivate = ["127.0.0.1"], resolve = fakeDns({}), ...rest } = opts;
  const t = createWebFetchTool({ timeoutMs: 5000, maxBytes: 5_000_000, maxChars: 100_000, maxUses: 10, egress: testEgress({ allowPrivate }, resolve), ...rest });
  return (url: string, c = ctx()): Promise<ToolOutput> => t.execute({ url }, c);
}

const ARTICLE = `<!doctype html><html><head><title>Ginger tea | Example Recipes</title><script>window.track("view")</script><style>body{color:red}</style></head>
<body>
<div id="cookie-banner" class="cookie-consent"><p>We use cookies to improve your experience.</p><button>Accept all cookies</button></div>
<nav><ul><li><a href="/">Home</a></li><li><a href="/recipes">All recipes</a></li></ul></nav>
<main><article>
<h1>Ginger tea</h1>
<p>Ginger tea is a warming drink that takes about ten minutes to make. Slice a thumb of fresh ginger thinly, cover it with boiling water and let it steep while you find a mug.</p>
<p>Add <strong>honey</strong> and a squeeze of lemon to taste. Strain the slices out before drinking, or leave them in if you like it strong.</p>
<script>document.write("injected by script")</script>
</article></main>
<footer>© Example Recipes · Privacy · Imprint</footer>
</body></html>`;

const ARTICLE_MD = `<external-content source="URL">
# Ginger tea | Example Recipes

Ginger tea is a warming drink that takes about ten minutes to make. Slice a thumb of fresh ginger thinly, cover it with boiling water and let it steep while you find a mug.

Add **honey** and a squeeze of lemon to taste. Strain the slices out before drinking, or leave them in if you like it strong.
</external-content>`;

const html = (body: string) => (_req: unknown, res: import("node:http").ServerResponse) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
const redirect = (to: string, status = 302) => (_req: unknown, res: import("node:http").ServerResponse) => res.writeHead(status, { location: to }).end();

describe("web_fetch (local)", () => {
  it("returns the article's main content as markdown, without scripts, navigation or cookie banner", async () => {
    web.route("/tea", html(ARTICLE));
    const out = await tool()(`${web.url}/tea`);
    expect(out).toEqual({ content: ARTICLE_MD.replace("URL", `${web.url}/tea`) });
  });

  it("follows a redirect chain and names the final URL", async () => {
    web.route("/a", redirect("/b", 301));
    web.route("/b", redirect(`${web.url}/c`, 307));
    web.route("/c", redirect("/tea", 302));
    web.route("/tea", html(ARTICLE));
    const out = await tool()(`${web.url}/a`);
    expect(out).toEqual({ content: ARTICLE_MD.replace("URL", `${web.url}/tea`) });
    expect(web.hits).toEqual(["/a", "/b", "/c", "/tea"]);
  });

  it("stops after 5 redirects", async () => {
    for (let i = 0; i < 7; i++) web.route(`/loop${i}`, redirect(`/loop${i + 1}`));
    const out = await tool()(`${web.url}/loop0`);
    expect(out).toEqual({ content: `Too many redirects (more than 5) starting from ${web.url}/loop0.`, isError: true });
    expect(web.hits).toHaveLength(6);
  });

  it("cuts a body over 5 MB at the cap and returns at most 100,000 characters", async () => {
    web.route("/big", (_req, res) => {
      let written = 0;
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(64 * 1024);
      const pump = () => {
        // 8 MB in all, unless the client stops reading first.
        while (written < 8_000_000 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    const got = await fetchUrl(`${web.url}/big`, { timeoutMs: 5000, maxBytes: 5_000_000, target: async () => ({ address: "127.0.0.1", family: 4 }), signal: new AbortController().signal });
    expect(got.truncated).toBe(true);
    expect(got.body.length).toBe(5_000_000);
    const out = await tool()(`${web.url}/big`);
    expect(out.content).toBe(`<external-content source="${web.url}/big">\n${"x".repeat(100_000)}\n\n[The download was cut at 5000000 bytes.] [Cut at 100000 characters.]\n</external-content>`);
  });

  it("a page nested too deep for a DOM gives its first 64,000 characters of plain text, and says why", async () => {
    const words = "<p>word </p>".repeat(10_000); // 50,000 characters of text
    web.route("/deep", html(`<html><body>${"<div>".repeat(300)}${words}${words}${"</div>".repeat(300)}</body></html>`));
    const out = await tool()(`${web.url}/deep`);
    const head = `<external-content source="${web.url}/deep">\n[The page is too complex to extract (its tags nest deeper than 256 levels); here is the first 64,000 characters of its text, without markup.]\n\n`;
    expect(out.isError ?? false).toBe(false);
    expect(out.content).toBe(`${head}${"word\n".repeat(12_800).slice(0, 64_000)}\n</external-content>`);
  });

  it("a PDF bomb is refused before it is unpacked", async () => {
    const { bombPdf } = await import("../../../support/web-fixtures.ts");
    const bomb = await bombPdf(100 * 1024 * 1024);
    web.route("/bomb.pdf", (_req, res) => res.writeHead(200, { "content-type": "application/pdf" }).end(bomb));
    expect(await tool()(`${web.url}/bomb.pdf`)).toEqual({ content: "The PDF is too complex to extract (a compressed part of it unpacks to more than 64 MB).", isError: true });
  });

  it("extracts the text of a PDF", async () => {
    web.route("/doc.pdf", (_req, res) => res.writeHead(200, { "content-type": "application/pdf" }).end(tinyPdf("Quarterly report: revenue grew 12 percent")));
    const out = await tool()(`${web.url}/doc.pdf`);
    expect(out).toEqual({ content: `<external-content source="${web.url}/doc.pdf">\nQuarterly report: revenue grew 12 percent\n</external-content>` });
  });

  it("pretty-prints JSON and reports an HTTP error status", async () => {
    web.route("/api", (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"temp":21,"unit":"C"}'));
    expect(await tool()(`${web.url}/api`)).toEqual({ content: `<external-content source="${web.url}/api">\n{\n  "temp": 21,\n  "unit": "C"\n}\n</external-content>` });
    expect(await tool()(`${web.url}/missing`)).toEqual({ content: `${web.url}/missing answered HTTP 404 Not Found.`, isError: true });
  });

  it("turns a server that never answers into a clear timeout error", async () => {
    web.route("/slow", () => {});
    const out = await tool({ timeoutMs: 1000 })(`${web.url}/slow`);
    expect(out).toEqual({ content: `Timed out after 1 s fetching ${web.url}/slow.`, isError: true });
  });

  it("serves the same URL from its 15-minute cache", async () => {
    web.route("/tea", html(ARTICLE));
    let now = 1_000_000;
    const fetch = tool({ clock: () => now });
    const first = await fetch(`${web.url}/tea`);
    expect(await fetch(`${web.url}/tea`)).toEqual(first);
    expect(web.hits).toEqual(["/tea"]);
    now += 15 * 60_000;
    await fetch(`${web.url}/tea`);
    expect(web.hits).toEqual(["/tea", "/tea"]);
  });

  it("stops at maxUses per run", async () => {
    web.route("/tea", html(ARTICLE));
    const fetch = tool({ maxUses: 1 });
    const run = ctx();
    expect((await fetch(`${web.url}/tea`, run)).isError).toBeUndefined();
    expect(await fetch(`${web.url}/tea`, run)).toEqual({ content: "The web_fetch limit for one answer (1) is reached; answer with what you have.", isError: true });
    expect((await fetch(`${web.url}/tea`, ctx())).isError).toBeUndefined();
  });
});

describe("web_fetch SSRF guard", () => {
  const refusal = (target: string, range: string, via = "") =>
    ({ content: `Refused: ${target} is a ${range} address${via}, not a public one; the owner can allow it in egress.allowPrivate.`, isError: true });

  it("refuses loopback, private, link-local (metadata) and IPv6 loopback targets without connecting", async () => {
    web.route("/tea", html(ARTICLE));
    const fetch = tool({ allowPrivate: [] });
    expect(await fetch(`${web.url}/tea`)).toEqual(refusal("127.0.0.1", "loopback"));
    expect(await fetch("http://10.0.0.1/")).toEqual(refusal("10.0.0.1", "private"));
    expect(await fetch("http://169.254.169.254/latest/meta-data/")).toEqual(refusal("169.254.169.254", "linkLocal"));
    expect(await fetch(`http://[::1]:${web.port}/tea`)).toEqual(refusal("::1", "loopback"));
    expect(await fetch(`http://[::ffff:127.0.0.1]:${web.port}/tea`)).toEqual(refusal("::ffff:7f00:1", "loopback"));
    expect(await fetch(`http://[::127.0.0.1]:${web.port}/tea`)).toEqual(refusal("::7f00:1", "loopback"));
    expect(await fetch(`http://[64:ff9b::169.254.169.254]/latest/meta-data/`)).toEqual(refusal("64:ff9b::a9fe:a9fe", "linkLocal"));
    expect(await fetch("http://100.64.0.1/")).toEqual(refusal("100.64.0.1", "carrierGradeNat"));
    expect(await fetch("file:///etc/passwd")).toEqual({ content: "Only http and https URLs can be fetched, not file:", isError: true });
    expect(web.hits).toEqual([]);
  });

  it("fetches 127.0.0.1 once it is allow-listed", async () => {
    web.route("/tea", html(ARTICLE));
    expect(await tool({ allowPrivate: ["127.0.0.1"] })(`${web.url}/tea`)).toEqual({ content: ARTICLE_MD.replace("URL", `${web.url}/tea`) });
  });

  it("refuses a host name that resolves to 127.0.0.1 unless that name is allow-listed, and connects to the checked address", async () => {
    web.route("/tea", html(ARTICLE));
    const dns = fakeDns({ "intranet.test": ["127.0.0.1"] });
    expect(await tool({ allowPrivate: [], resolve: dns })(`http://intranet.test:${web.port}/tea`)).toEqual(
      refusal("intranet.test", "loopback", " (intranet.test resolves to 127.0.0.1)"),
    );
    expect(web.hits).toEqual([]);
    // Allowed: the connection goes to the address the guard saw (the name is unknown to real DNS).
    const out = await tool({ allowPrivate: ["intranet.test"], resolve: dns })(`http://intranet.test:${web.port}/tea`);
    expect(out).toEqual({ content: ARTICLE_MD.replace("URL", `http://intranet.test:${web.port}/tea`) });
    expect(dns.calls).toEqual(["intranet.test", "intranet.test"]);
  });

  it("refuses a name with any private address among its answers (DNS rebinding)", async () => {
    const dns = fakeDns({ "rebind.test": ["93.184.216.34", "127.0.0.1"] });
    expect(await tool({ allowPrivate: [], resolve: dns })(`http://rebind.test:${web.port}/`)).toEqual(
      refusal("rebind.test", "loopback", " (rebind.test resolves to 127.0.0.1)"),
    );
  });

  it("refuses a redirect from an allowed host to 127.0.0.1", async () => {
    // "public.example" stands for a public site: allow-listed so its own hop may reach the local server.
    web.route("/go", redirect(`${web.url}/tea`));
    web.route("/tea", html(ARTICLE));
    const dns = fakeDns({ "public.example": ["127.0.0.1"] });
    const out = await tool({ allowPrivate: ["public.example"], resolve: dns })(`http://public.example:${web.port}/go`);
    expect(out).toEqual(refusal("127.0.0.1", "loopback"));
    expect(web.hits).toEqual(["/go"]);
  });
});
