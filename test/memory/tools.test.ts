import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Scope } from "../../src/agent/messages.ts";
import { toolSpec, type Tool, type ToolContext, type ToolOutput } from "../../src/agent/tool.ts";
import { silentLogger } from "../../src/process/log.ts";
import { SearchIndex } from "../../src/memory/search/search-index.ts";
import { createMemoryTools } from "../../src/memory/tools.ts";

// 20:30 UTC on 1 January is 09:30 on 2 January in Auckland (UTC+13 in summer).
const NOW = Date.UTC(2026, 0, 1, 20, 30);
const TIMEZONE = "Pacific/Auckland";
const TODAY = "2026-01-02";

const GROUP = "group:telegram:-100";
const OWN_CHAT = "memory/chats/telegram_-100";
const OTHER_CHAT = "memory/chats/discord_9";

/** One unique word per private file, so a leak of any file's bytes is visible in any output. */
const SECRETS: Record<string, string> = {
  "USER.md": "zanzibarsecret",
  "MEMORY.md": "quetzalsecret",
  "HEARTBEAT.md": "heartbeatsecret",
  "memory/2026-01-01.md": "dailylogsecret",
  [`${OTHER_CHAT}/2026-01-01.md`]: "otherchatsecret",
};
const ALL_SECRETS = Object.values(SECRETS);

let base: string;
let workspace: string;
let index: SearchIndex;
let ownWrites: string[];
let tools: Record<string, Tool>;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-memtools-")));
  workspace = path.join(base, "workspace");
  await mkdir(workspace);
  for (const [rel, secret] of Object.entries(SECRETS)) await put(rel, `# Private\n\n## Pets\nthe cat's name is ${secret}\n`);
  await put("SOUL.md", "# Soul\n\nI am Hearth, warm and brief.\n");
  await put(`${OWN_CHAT}/2026-01-01.md`, "# 2026-01-01\n\n- the group plans a picnic\n");
  await put("notes.txt", "not markdown\n");
  await writeFile(path.join(base, "outside.md"), "outside zanzibarsecret\n");
  index = SearchIndex.open(path.join(base, "index", "memory.db"), silentLogger);
  index.reconcile(workspace);
  ownWrites = [];
  const list = createMemoryTools({
    workspace,
    timezone: TIMEZONE,
    index,
    clock: () => NOW,
    onOwnWrite: (rel) => ownWrites.push(rel),
  });
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

const ctx = (scope: Scope): ToolContext => ({
  signal: new AbortController().signal,
  workspace,
  scope,
  sessionKey: scope === "main" ? "main" : GROUP,
  log: silentLogger,
});

async function call(scope: Scope, name: string, input: unknown): Promise<ToolOutput> {
  const tool = tools[name]!;
  return tool.execute(tool.input.parse(input), ctx(scope));
}

const expectNoSecret = (out: ToolOutput) => {
  for (const s of ALL_SECRETS) expect(out.content).not.toContain(s);
};

describe("createMemoryTools", () => {
  it("returns the three tools; only memory_write changes anything", () => {
    expect(Object.values(tools).map((t) => [t.name, t.readOnly])).toEqual([
      ["memory_search", true],
      ["memory_get", true],
      ["memory_write", false],
    ]);
  });

  it("keeps every description to one short sentence", () => {
    for (const t of Object.values(tools)) {
      const spec = toolSpec(t);
      expect(spec.description.length).toBeLessThan(120);
      expect(JSON.stringify(spec).length).toBeLessThan(600);
    }
  });
});

describe("privacy: a shared scope", () => {
  it("memory_search finds no secret from USER.md, MEMORY.md, a main daily log or another chat", async () => {
    for (const q of [...ALL_SECRETS, ALL_SECRETS.join(" "), "cat name pets private", "USER MEMORY md"]) {
      const out = await call("shared", "memory_search", { query: q, limit: 20 });
      expect(out.isError).toBeFalsy();
      expectNoSecret(out);
    }
    expect((await call("shared", "memory_search", { query: ALL_SECRETS[0]! })).content).toBe("No matches.");
  });

  it("memory_search still finds its own chat's notes and the shared files", async () => {
    expect((await call("shared", "memory_search", { query: "picnic" })).content).toMatch(
      new RegExp(`^${OWN_CHAT}/2026-01-01\\.md:3 \\(# 2026-01-01\\) .*\\[picnic\\]`),
    );
    expect((await call("shared", "memory_search", { query: "warm" })).content).toContain("SOUL.md:3");
  });

  it("memory_get refuses every private path with one message that reveals nothing", async () => {
    await symlink(path.join(workspace, "MEMORY.md"), path.join(workspace, OWN_CHAT, "link.md"));
    await symlink(path.join(workspace, "memory"), path.join(workspace, OWN_CHAT, "dir"));
    await symlink(path.join(workspace, "memory", "2099-01-01.md"), path.join(workspace, OWN_CHAT, "dangling.md"));
    await symlink(path.join(base, "outside.md"), path.join(workspace, OWN_CHAT, "out.md"));
    await link(path.join(workspace, "USER.md"), path.join(workspace, OWN_CHAT, "hard.md"));
    const refused = [
      "USER.md",
      "MEMORY.md",
      "HEARTBEAT.md",
      "memory/2026-01-01.md",
      "memory/2020-05-05.md", // a private path that does not exist: same answer
      "NOPE.md",
      `${OTHER_CHAT}/2026-01-01.md`,
      `${OTHER_CHAT}/missing.md`,
      `${OWN_CHAT}/../../../MEMORY.md`,
      `${OWN_CHAT}/link.md`,
      `${OWN_CHAT}/dir/2026-01-01.md`,
      `${OWN_CHAT}/dangling.md`,
      `${OWN_CHAT}/hard.md`,
      `${OWN_CHAT}/out.md`,
      "../outside.md",
      "../../etc/passwd",
      path.join(workspace, "MEMORY.md"),
      path.join(workspace, OWN_CHAT, "2026-01-01.md"),
      path.join(base, "outside.md"),
      "/etc/passwd",
      "notes.txt",
      "memory",
      ".",
    ];
    const messages = new Set<string>();
    for (const p of refused) {
      const out = await call("shared", "memory_get", { path: p });
      expect(out.isError, p).toBe(true);
      expectNoSecret(out);
      expect(out.content).not.toContain("outside");
      messages.add(out.content);
    }
    expect([...messages]).toEqual([
      `Not available in this conversation: memory_get can only read the shared files (SOUL.md, IDENTITY.md, AGENTS.md) and this chat's own notes in ${OWN_CHAT}/.`,
    ]);
  });

  it("memory_get reads its own chat's notes and the shared files", async () => {
    expect(await call("shared", "memory_get", { path: `${OWN_CHAT}/2026-01-01.md` })).toEqual({
      content: "     1\t# 2026-01-01\n     2\t\n     3\t- the group plans a picnic",
    });
    expect((await call("shared", "memory_get", { path: "SOUL.md", from: 3 })).content).toBe("     3\tI am Hearth, warm and brief.");
    expect(await call("shared", "memory_get", { path: `${OWN_CHAT}/none.md` })).toEqual({
      content: `File not found: "${OWN_CHAT}/none.md".`,
      isError: true,
    });
  });

  it("memory_write cannot append to MEMORY.md", async () => {
    const before = await readFile(path.join(workspace, "MEMORY.md"), "utf8");
    const out = await call("shared", "memory_write", { text: "owner is a spy", target: "memory" });
    expect(out.isError).toBe(true);
    expect(out.content).toContain("Not available in this conversation");
    expect(await readFile(path.join(workspace, "MEMORY.md"), "utf8")).toBe(before);
    expect(ownWrites).toEqual([]);
  });

  it("memory_write goes to its own chat's log for today, searchable at once by that chat only", async () => {
    const out = await call("shared", "memory_write", { text: "Bob brings the frisbee" });
    expect(out).toEqual({ content: `Saved to ${OWN_CHAT}/${TODAY}.md.` });
    expect(await readFile(path.join(workspace, OWN_CHAT, `${TODAY}.md`), "utf8")).toBe(`# ${TODAY}\n\n- 09:30 Bob brings the frisbee\n`);
    expect(ownWrites).toEqual([`${OWN_CHAT}/${TODAY}.md`]);
    expect((await call("shared", "memory_search", { query: "frisbee" })).content).toContain(`${OWN_CHAT}/${TODAY}.md:3`);
    expect((await call("main", "memory_search", { query: "frisbee" })).content).toContain(`${OWN_CHAT}/${TODAY}.md:3`);
  });

  it.each(["symlink", "hard link"])("memory_write refuses a chat log that is a %s to a private file", async (kind) => {
    const log = path.join(workspace, OWN_CHAT, `${TODAY}.md`);
    await (kind === "symlink" ? symlink : link)(path.join(workspace, "MEMORY.md"), log);
    const before = await readFile(path.join(workspace, "MEMORY.md"), "utf8");
    const out = await call("shared", "memory_write", { text: "injected" });
    const reason = kind === "symlink" ? "a symlink" : "a file with 2 names (hard links)";
    expect(out).toEqual({
      content: `Could not save the note to ${OWN_CHAT}/${TODAY}.md (${reason}). Hearth writes only to plain files inside the workspace (no symlink, no hard link, no linked folder); ask the owner to fix it.`,
      isError: true,
    });
    expectNoSecret(out);
    expect(await readFile(path.join(workspace, "MEMORY.md"), "utf8")).toBe(before);
    expect(ownWrites).toEqual([]);
    expect((await call("shared", "memory_search", { query: "injected quetzalsecret" })).content).toBe("No matches.");
  });
});

describe("main scope", () => {
  it("memory_search finds every file, as path:line (heading) snippet", async () => {
    const out = await call("main", "memory_search", { query: SECRETS["MEMORY.md"]! });
    expect(out.content).toBe("MEMORY.md:4 (## Pets) the cat's name is [quetzalsecret]");
    for (const [rel, secret] of Object.entries(SECRETS)) {
      expect((await call("main", "memory_search", { query: secret })).content).toContain(`${rel}:4`);
    }
    expect((await call("main", "memory_search", { query: "secret", limit: 2 })).content).toBe("No matches.");
    expect((await call("main", "memory_search", { query: "cat pets", limit: 2 })).content.split("\n")).toHaveLength(2);
  });

  it("memory_search explains an empty query", async () => {
    expect(await call("main", "memory_search", { query: "  " })).toMatchObject({ isError: true });
  });

  it("memory_get reads a window of any markdown file, 60 lines by default and at most 400", async () => {
    await put("memory/long.md", Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n"));
    expect((await call("main", "memory_get", { path: "USER.md" })).content).toContain("zanzibarsecret");
    const first = (await call("main", "memory_get", { path: "memory/long.md" })).content.split("\n");
    expect(first).toHaveLength(61);
    expect(first[60]).toBe("[lines 1-60 of 1000; use from to read more]");
    const window = (await call("main", "memory_get", { path: "memory/long.md", from: 500, lines: 5000 })).content.split("\n");
    expect(window[0]).toBe("   500\tline 500");
    expect(window).toHaveLength(401);
    expect(await call("main", "memory_get", { path: "memory/long.md", from: 2000 })).toMatchObject({ isError: true, content: expect.stringContaining("from 2000 is past the end") });
  });

  it("memory_get refuses non-markdown files and paths outside the workspace", async () => {
    expect(await call("main", "memory_get", { path: "notes.txt" })).toMatchObject({ isError: true, content: expect.stringContaining("use read") });
    const out = await call("main", "memory_get", { path: "../outside.md" });
    expect(out).toMatchObject({ isError: true, content: expect.stringContaining("outside the workspace") });
    expect(out.content).not.toContain("zanzibarsecret");
  });

  it("memory_write logs a timestamped note to today's main log in the owner's timezone", async () => {
    const out = await call("main", "memory_write", { text: "Dentist moved to Friday\nbring the X-rays" });
    expect(out).toEqual({ content: `Saved to memory/${TODAY}.md.` });
    expect(await readFile(path.join(workspace, "memory", `${TODAY}.md`), "utf8")).toBe(
      `# ${TODAY}\n\n- 09:30 Dentist moved to Friday\n  bring the X-rays\n`,
    );
    await call("main", "memory_write", { text: "second note", target: "log" });
    expect(await readFile(path.join(workspace, "memory", `${TODAY}.md`), "utf8")).toMatch(/X-rays\n- 09:30 second note\n$/);
    expect(ownWrites).toEqual([`memory/${TODAY}.md`, `memory/${TODAY}.md`]);
    expect((await call("main", "memory_search", { query: "x-rays dentist" })).content).toMatch(new RegExp(`^memory/${TODAY}\\.md:3`));
    expect((await call("shared", "memory_search", { query: "dentist" })).content).toBe("No matches.");
  });

  it("memory_write target memory appends a bullet to MEMORY.md, after a line end", async () => {
    await put("MEMORY.md", "# Memory\n- likes tea"); // hand-edited, no final newline
    const out = await call("main", "memory_write", { text: "Allergic to penicillin", target: "memory" });
    expect(out).toEqual({ content: "Saved to MEMORY.md." });
    expect(await readFile(path.join(workspace, "MEMORY.md"), "utf8")).toBe("# Memory\n- likes tea\n- Allergic to penicillin\n");
    expect(ownWrites).toEqual(["MEMORY.md"]);
    expect((await call("main", "memory_search", { query: "penicillin" })).content).toContain("MEMORY.md:3 (# Memory)");
  });

  it("memory_get follows the owner's symlink inside the workspace but refuses SOUL.md as a link out", async () => {
    await rm(path.join(workspace, "USER.md"));
    await symlink("memory/2026-01-01.md", path.join(workspace, "USER.md"));
    expect((await call("main", "memory_get", { path: "USER.md", from: 4 })).content).toBe("     4\tthe cat's name is dailylogsecret");
    await rm(path.join(workspace, "SOUL.md"));
    await symlink("../outside.md", path.join(workspace, "SOUL.md"));
    expect(await call("main", "memory_get", { path: "SOUL.md" })).toEqual({
      content: 'Refused "SOUL.md" (a symlink). memory_get reads only plain markdown files inside the workspace; a note the chats see must not be a link.',
      isError: true,
    });
  });

  it("memory_write does not write through the owner's symlinked MEMORY.md or daily log", async () => {
    await put("notes/memory.md", "# kept\n");
    await rm(path.join(workspace, "MEMORY.md"));
    await symlink("notes/memory.md", path.join(workspace, "MEMORY.md"));
    await symlink(`../${OWN_CHAT}/2026-01-01.md`, path.join(workspace, "memory", `${TODAY}.md`));
    const memory = await call("main", "memory_write", { text: "fact", target: "memory" });
    expect(memory).toMatchObject({ isError: true, content: expect.stringMatching(/^Could not save the note to MEMORY\.md \(a symlink\)\./) });
    const log = await call("main", "memory_write", { text: "private thought" });
    expect(log).toMatchObject({ isError: true, content: expect.stringMatching(new RegExp(`^Could not save the note to memory/${TODAY}\\.md \\(a symlink\\)\\.`)) });
    expect(await readFile(path.join(workspace, "notes/memory.md"), "utf8")).toBe("# kept\n");
    expect(await readFile(path.join(workspace, OWN_CHAT, "2026-01-01.md"), "utf8")).toBe("# 2026-01-01\n\n- the group plans a picnic\n");
    expect(ownWrites).toEqual([]);
  });

  it("memory_write refuses empty and oversized notes and writes nothing", async () => {
    expect(await call("main", "memory_write", { text: "  \n " })).toMatchObject({ isError: true, content: expect.stringContaining("empty") });
    expect(await call("main", "memory_write", { text: "x".repeat(4001) })).toMatchObject({ isError: true, content: expect.stringContaining("4000") });
    expect(await call("main", "memory_write", { text: "x".repeat(4000) })).toEqual({ content: `Saved to memory/${TODAY}.md.` });
    expect(ownWrites).toEqual([`memory/${TODAY}.md`]);
  });
});
