// Readiness does not wait for the watcher's first scan of the workspace (memory.ts): until the
// watcher covers everything, the memory service checks context files itself, and the index
// build makes a second pass, so an edit made in the first moments is neither served stale nor
// lost from search.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/agent/tool.ts";
import { createLogger } from "../../src/process/log.ts";
import { openMemory, type MemoryService } from "../../src/memory/memory.ts";

const NOW = Date.UTC(2026, 10, 23, 12);
const MAIN = { kind: "main" } as const;
let base: string;
let workspace: string;
let memory: MemoryService;
let logLines: string[];

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-memearly-")));
  workspace = path.join(base, "workspace");
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- likes tea\n");
  logLines = [];
  const log = createLogger({ level: "info", sink: { write: (l) => void logLines.push(l) } });
  memory = await openMemory({ workspace, indexPath: path.join(base, "index", "memory.db"), timezone: "UTC", log, clock: () => NOW, restoreWorkspace: () => {} });
});
afterEach(async () => {
  await memory.close();
  await rm(base, { recursive: true, force: true });
});

async function waitUntil(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const exchange = { at: NOW, channel: "cli", sender: "Owner", userText: "what now?", replyText: "tea, as always" };

describe("memory before the watcher covers the workspace", () => {
  it("serves a hand edit of MEMORY.md in the next context, without the old text", () => {
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes tea");
    writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- likes green coffee\n");
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes green coffee");
  });

  it("sees a context file created and one deleted by hand", () => {
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes tea");
    writeFileSync(path.join(workspace, "USER.md"), "# User\n\nAlice\n");
    expect(memory.context("main", MAIN, NOW)).toBe("## USER.md\n# User\n\nAlice\n\n## MEMORY.md\n# Memory\n\n- likes tea");
    writeFileSync(path.join(workspace, "MEMORY.md"), "");
    expect(memory.context("main", MAIN, NOW)).toBe("## USER.md\n# User\n\nAlice");
  });

  it("keeps the context byte-identical after the daemon's own append, and still sees a hand edit after it", () => {
    const before = memory.context("main", MAIN, NOW);
    memory.logExchange(MAIN, exchange);
    expect(memory.context("main", MAIN, NOW)).toBe(before);
    const log = path.join(workspace, "memory", "2026-11-23.md");
    appendFileSync(log, "\n- a note typed by hand\n");
    const after = memory.context("main", MAIN, NOW);
    expect(after).toBe(`${before}\n\n## memory/2026-11-23.md (today)\n# 2026-11-23\n\n### 12:00 · cli · Owner\n> what now?\n\ntea, as always\n\n\n- a note typed by hand`);
    expect(logLines.filter((l) => l.includes('"memory.hand_edit"'))).toHaveLength(1);
  });

  it("hands over to the watcher: an edit made before it was ready is served, and a later one arrives as a watcher event", async () => {
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes tea");
    writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- likes mint\n");
    memory.startBackground();
    await memory.watching();
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes mint");
    const events: string[] = [];
    memory.onWorkspaceEvent((e) => events.push(`${e.kind} ${e.relPath} ${e.handEdit}`));
    writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- likes lemonade\n");
    await waitUntil("the watcher's event", () => events.length > 0);
    expect(events).toEqual(["change MEMORY.md true"]);
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes lemonade");
  });

  it("indexes an edit made while the first build and the watcher's scan run", async () => {
    for (let d = 0; d < 20; d++) {
      mkdirSync(path.join(workspace, "notes", `d${d}`), { recursive: true });
      for (let f = 0; f < 20; f++) writeFileSync(path.join(workspace, "notes", `d${d}`, `n${f}.md`), `# Note ${d}-${f}\n\nabout the garden\n`);
    }
    writeFileSync(path.join(workspace, "notes", "plan.md"), "# Plan\n\nplant alphaword tulips\n");
    memory.startBackground();
    await sleep(0);
    writeFileSync(path.join(workspace, "notes", "plan.md"), "# Plan\n\nplant omegaword roses today\n");
    await waitUntil("the index build", () => logLines.some((l) => l.includes('"memory.index_ready"')));
    const search = memory.tools().find((t) => t.name === "memory_search")!;
    const ctx = { signal: new AbortController().signal, workspace, scope: "main", sessionKey: "main", log: createLogger({ level: "silent" }) } as ToolContext;
    const found = await search.execute(search.input.parse({ query: "omegaword" }), ctx);
    expect(found.content).toBe("notes/plan.md:3 (# Plan) plant [omegaword] roses today");
    const gone = await search.execute(search.input.parse({ query: "alphaword" }), ctx);
    expect(gone.content).toBe("No matches.");
  });
});

describe("a workspace deleted before the watcher covered it", () => {
  it("is recreated from the templates once the watcher is ready, and a later hand edit still reaches the context", async () => {
    await memory.close();
    const restored: string[] = [];
    const log = createLogger({ level: "info", sink: { write: (l) => void logLines.push(l) } });
    const restoreWorkspace = () => {
      restored.push("restore");
      mkdirSync(path.join(workspace, "memory"), { recursive: true });
      writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n(template)\n");
    };
    memory = await openMemory({ workspace, indexPath: path.join(base, "index", "memory.db"), timezone: "UTC", log, clock: () => NOW, restoreWorkspace });
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes tea");
    await rm(workspace, { recursive: true, force: true });
    memory.startBackground();
    await memory.watching();
    expect(restored).toEqual(["restore"]);
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n(template)");
    writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- likes cocoa\n");
    await waitUntil("the edit", () => memory.context("main", MAIN, NOW).endsWith("cocoa"));
    expect(memory.context("main", MAIN, NOW)).toBe("## MEMORY.md\n# Memory\n\n- likes cocoa");
  });
});
