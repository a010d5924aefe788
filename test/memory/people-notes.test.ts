// Notes about the people in a shared chat (memory/chats/<chat>/people/<sender id>.md): written by
// memory_write target person for the member addressing Hearth, in the context only when that
// member addresses it, never readable or searchable by another member, visible to the owner.
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Tool, ToolContext, ToolOutput } from "../../src/agent/tool.ts";
import { silentLogger } from "../../src/process/log.ts";
import { ContextCache } from "../../src/memory/context.ts";
import { SearchIndex } from "../../src/memory/search/search-index.ts";
import { createMemoryTools } from "../../src/memory/tools.ts";
import { canSee, canSend, memoryScopeFor } from "../../src/memory/visibility.ts";

const NOW = Date.UTC(2026, 0, 2, 9, 30);
const GROUP = "group:telegram:-100";
const CHAT = "memory/chats/telegram_-100";
const ANN = "200";
const BOB = "300";

let base: string;
let workspace: string;
let index: SearchIndex;
let tools: Record<string, Tool>;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-people-")));
  workspace = path.join(base, "workspace");
  await mkdir(workspace);
  await put("SOUL.md", "# Soul\n\nI am Hearth.\n");
  await put(`${CHAT}/2026-01-02.md`, "# 2026-01-02\n\n- the group plans a picnic\n");
  index = SearchIndex.open(path.join(base, "index", "memory.db"), silentLogger);
  index.reconcile(workspace);
  const list = createMemoryTools({ workspace, timezone: "UTC", index, clock: () => NOW, onOwnWrite: () => {} });
  tools = Object.fromEntries(list.map((t) => [t.name, t]));
});
afterEach(async () => {
  index.close();
  await rm(base, { recursive: true, force: true });
});

async function put(rel: string, text: string): Promise<void> {
  const abs = path.join(workspace, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, text);
}

const ctx = (who: string | "owner"): ToolContext => ({
  signal: new AbortController().signal,
  workspace,
  scope: who === "owner" ? "main" : "shared",
  sessionKey: who === "owner" ? "main" : GROUP,
  ...(who === "owner" || who === "nobody" ? {} : { person: who }),
  log: silentLogger,
});

async function call(who: string, name: string, input: unknown): Promise<ToolOutput> {
  const tool = tools[name]!;
  return tool.execute(tool.input.parse(input), ctx(who));
}

describe("people notes in a shared chat", () => {
  it("memory_write target person appends to the notes about the member addressing Hearth, and only theirs", async () => {
    expect(await call(ANN, "memory_write", { text: "Ann is vegetarian.", target: "person" })).toEqual({ content: `Saved to ${CHAT}/people/200.md.` });
    expect(await readFile(path.join(workspace, CHAT, "people", "200.md"), "utf8")).toBe("- Ann is vegetarian.\n");
    expect(await call(BOB, "memory_write", { text: "Bob likes jazz.", target: "person" })).toEqual({ content: `Saved to ${CHAT}/people/300.md.` });
    expect(await readFile(path.join(workspace, CHAT, "people", "300.md"), "utf8")).toBe("- Bob likes jazz.\n");
    expect(await call("owner", "memory_write", { text: "x", target: "person" })).toEqual({
      content: "Target person is for notes about a member of a shared chat; in the owner's own conversation save lasting facts with target memory.",
      isError: true,
    });
    expect((await call("nobody", "memory_write", { text: "x", target: "person" })).isError).toBe(true);
  });

  it("another member can neither read nor find them, by any path spelling; the member themself and the owner can", async () => {
    await call(ANN, "memory_write", { text: "Ann is vegetarian, allergic to kiwifruit.", target: "person" });
    for (const p of [`${CHAT}/people/200.md`, `${CHAT}/./people/200.md`, `${CHAT}/people/../people/200.md`, path.join(workspace, CHAT, "people", "200.md")]) {
      const r = await call(BOB, "memory_get", { path: p });
      expect(r.isError).toBe(true);
      expect(r.content).not.toContain("kiwifruit");
    }
    expect((await call(BOB, "memory_search", { query: "kiwifruit" })).content).toBe("No matches.");
    expect((await call("nobody", "memory_search", { query: "kiwifruit" })).content).toBe("No matches.");
    expect((await call(ANN, "memory_get", { path: `${CHAT}/people/200.md` })).content).toContain("kiwifruit");
    expect((await call(ANN, "memory_search", { query: "kiwifruit" })).content).toContain(`${CHAT}/people/200.md:1`);
    expect((await call("owner", "memory_get", { path: `${CHAT}/people/200.md` })).content).toContain("kiwifruit");
    expect((await call("owner", "memory_search", { query: "kiwifruit" })).content).toContain(`${CHAT}/people/200.md:1`);
    // The group's shared notes stay everyone's.
    expect((await call(BOB, "memory_search", { query: "picnic" })).content).toContain(`${CHAT}/2026-01-02.md`);
  });

  it("the context shows a member's notes only while that member addresses Hearth; never outside the chat", async () => {
    await put(`${CHAT}/people/200.md`, "- Ann is vegetarian.\n");
    const cache = new ContextCache({ workspace, timezone: "UTC", log: silentLogger });
    expect(cache.assemble(memoryScopeFor("shared", GROUP, ANN), NOW)).toContain("Ann is vegetarian.");
    expect(cache.assemble(memoryScopeFor("shared", GROUP, BOB), NOW)).not.toContain("Ann is vegetarian.");
    expect(cache.assemble(memoryScopeFor("shared", GROUP), NOW)).not.toContain("Ann is vegetarian.");
    expect(cache.assemble(memoryScopeFor("shared", "group:telegram:-999", ANN), NOW)).not.toContain("Ann is vegetarian.");
    const other = memoryScopeFor("shared", "group:telegram:-999", ANN);
    expect(canSee(other, `${CHAT}/people/200.md`)).toBe(false);
    expect(canSend(memoryScopeFor("shared", GROUP, BOB), `${CHAT}/people/200.md`)).toBe(false);
    expect(canSee({ kind: "main" }, `${CHAT}/people/200.md`)).toBe(true);
  });
});
