// The web fetch tool's machinery (node:https with TLS, zlib, the address checks) loads on its
// first use, not with the tool set: most installations never fetch, and the daemon would carry
// ~10 MB for it from start-up on.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const web = fileURLToPath(new URL("../../../../src/agent/tools/web/index.ts", import.meta.url));
const log = fileURLToPath(new URL("../../../../src/process/log.ts", import.meta.url));

function loadedAfter(script: string): string[] {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  return JSON.parse(out) as string[];
}

const setUp = `
  const { createWebTools } = await import(${JSON.stringify(web)});
  const { silentLogger } = await import(${JSON.stringify(log)});
  const rules = { enabled: true, mode: "local", maxUses: 5, allowedDomains: [], blockedDomains: [] };
  const { tools } = createWebTools({
    web: { search: { ...rules, provider: "searxng", baseUrl: "http://127.0.0.1:9" }, fetch: { ...rules, allowPrivate: [], timeoutMs: 1000, maxBytes: 100000, maxChars: 1000 } },
    timezone: "UTC", sharedAllow: [], log: silentLogger,
  });
  const networking = () => process.moduleLoadList.filter((m) => /^NativeModule (https|tls|zlib)$/.test(m));
`;

describe("web fetch loads on first use", () => {
  it("creating the web tools loads neither https, tls nor zlib", () => {
    expect(loadedAfter(`${setUp} process.stdout.write(JSON.stringify(networking()));`)).toEqual([]);
  });

  it("no parse worker exists until a page is parsed: worker_threads is not even loaded", () => {
    const script = `${setUp} await import(${JSON.stringify(fileURLToPath(new URL("../../../../src/media/prepare.ts", import.meta.url)))});
      process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => /worker_threads/.test(m))));`;
    expect(loadedAfter(script)).toEqual([]);
  });

  it("the first fetch loads them and answers", () => {
    const script = `${setUp}
      const fetch = tools.find((t) => t.name === "web_fetch");
      const ctx = { signal: new AbortController().signal, workspace: "/", scope: "main", sessionKey: "main", log: silentLogger };
      const out = await fetch.execute({ url: "http://127.0.0.1:9/page" }, ctx);
      process.stdout.write(JSON.stringify([...networking().sort(), out.isError === true]));`;
    expect(loadedAfter(script)).toEqual(["NativeModule https", "NativeModule tls", "NativeModule zlib", true]);
  });
});
