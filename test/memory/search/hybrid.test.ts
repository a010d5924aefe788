// Hybrid recall: keyword and vector ranks fused, scopes kept, embedded incrementally.
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/agent/tool.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { fuse, HybridSearch } from "../../../src/memory/search/hybrid.ts";
import { SearchIndex, type SearchHit } from "../../../src/memory/search/search-index.ts";
import { createMemoryTools } from "../../../src/memory/tools.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../support/fake-embeddings.ts";

let fake: FakeEmbeddings;
let base: string;
let workspace: string;
let index: SearchIndex;
const open: HybridSearch[] = [];

beforeAll(async () => void (fake = await startFakeEmbeddings()));
afterAll(() => fake.close());

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-hybrid-")));
  workspace = path.join(base, "workspace");
  await put("MEMORY.md", "# Memory\n\n## Things\nThe automobile is due for its inspection in May.\n\n## Food\nLikes ramen and dumplings.\n");
  await put("memory/chats/telegram_-100/2026-01-01.md", "# 2026-01-01\n\n- the group talked about a picnic in the park\n");
  index = SearchIndex.open(path.join(base, "index", "memory.db"), silentLogger);
  index.reconcile(workspace);
});
afterEach(async () => {
  for (const h of open.splice(0)) h.close();
  index.close();
  await rm(base, { recursive: true, force: true });
});

async function put(rel: string, text: string): Promise<void> {
  const abs = path.join(workspace, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, text);
}

const hybridOn = (model = "stand-in") => {
  const h = HybridSearch.open({ index, file: path.join(base, "index", "vectors.db"), config: { baseUrl: fake.baseUrl, model }, log: silentLogger });
  open.push(h);
  return h;
};

const ctx = (scope: "main" | "shared"): ToolContext => ({ signal: new AbortController().signal, workspace, scope, sessionKey: scope === "main" ? "main" : "group:telegram:-100", log: silentLogger });

async function search(scope: "main" | "shared", query: string, hybrid?: HybridSearch): Promise<string> {
  const tool = createMemoryTools({ workspace, timezone: "UTC", index, clock: () => 0, onOwnWrite: () => {}, ...(hybrid ? { hybrid } : {}) }).find((t) => t.name === "memory_search")!;
  return (await tool.execute(tool.input.parse({ query }), ctx(scope))).content as string;
}

describe("hybrid recall", () => {
  it('memory_search "car" finds the note that says "automobile"; keyword search alone does not', async () => {
    expect(await search("main", "car")).toBe("No matches.");
    const h = hybridOn();
    expect(await h.pass()).toBe(3);
    const found = await search("main", "car", h);
    expect(found.split("\n")[0]).toMatch(/^MEMORY\.md:4 \(## Things\) .*automobile is due for its inspection/);
  });

  it("a shared scope still finds nothing of main's, however close its vector", async () => {
    const h = hybridOn();
    await h.pass();
    const shared = await search("shared", "car automobile inspection", h);
    expect(shared).not.toContain("MEMORY.md");
    expect(shared).not.toContain("automobile");
    expect(await search("shared", "picnic park", h)).toContain("memory/chats/telegram_-100/2026-01-01.md");
  });

  it("embeds incrementally: a second start embeds nothing new, an edit only its chunk, another model everything again", async () => {
    await hybridOn().pass();
    open.pop()!.close();
    const before = fake.requests.length;
    const again = hybridOn();
    expect(await again.pass()).toBe(0);
    expect(fake.requests.length).toBe(before);
    await put("MEMORY.md", "# Memory\n\n## Things\nThe automobile is due for its inspection in May.\n\n## Food\nLikes ramen, dumplings and pho.\n");
    index.refreshFile(workspace, "MEMORY.md");
    expect(await again.pass()).toBe(1);
    expect(fake.requests.at(-1)!.input).toEqual(["## Food\nLikes ramen, dumplings and pho."]);
    again.close();
    open.pop();
    const other = hybridOn("another-model");
    expect(await other.pass()).toBe(3);
    expect(other.stored).toBe(3);
  });

  it("a failed embeddings service: keyword results alone, and the pass tries again later", async () => {
    const h = hybridOn();
    fake.failNext(1);
    expect(await h.pass()).toBe(0);
    expect(await h.pass()).toBe(3);
    fake.failNext(1);
    expect(await search("main", "ramen", h)).toMatch(/^MEMORY\.md:7 \(## Food\) Likes \[ramen\]/);
  });

  it("fuses ranks: a chunk in both lists beats chunks in one", () => {
    const hit = (chunk: number): SearchHit => ({ path: `n${chunk}.md`, line: 1, heading: "", snippet: "", score: 0, chunk });
    expect(fuse([[hit(1), hit(2)], [hit(3), hit(2)]], 3).map((h) => h.chunk)).toEqual([2, 1, 3]);
  });
});
