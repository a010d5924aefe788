import { spawn } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, type Logger } from "../../src/process/log.ts";
import { appendToDailyLog } from "../../src/memory/daily-log.ts";
import { WorkspaceWatcher, type WorkspaceEvent } from "../../src/memory/watcher.ts";

const templates = path.resolve(import.meta.dirname, "../../workspace");
const TZ = "Europe/Berlin";

let base: string;
let ws: string;
let events: WorkspaceEvent[];
let lines: Array<{ event: string; level: string; path?: string }>;
let log: Logger;
let watcher: WorkspaceWatcher | undefined;
let gone: number;

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "hearth-watch-")));
  ws = path.join(base, ".hearth", "workspace"); // the default home is a dot-folder: that must not matter
  cpSync(templates, ws, { recursive: true });
  events = [];
  lines = [];
  gone = 0;
  log = createLogger({ level: "debug", sink: { write: (l) => lines.push(JSON.parse(l)) } });
});
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  rmSync(base, { recursive: true, force: true });
});

const start = async (onWorkspaceGone?: () => void) => {
  watcher = await WorkspaceWatcher.start({
    workspace: ws,
    log,
    onEvent: (e) => events.push(e),
    onWorkspaceGone: () => {
      gone++;
      onWorkspaceGone?.();
    },
  });
  return watcher;
};

/** Polls until `cond` holds; fails with `what` after a generous timeout. */
async function waitFor<T>(what: string, cond: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = cond();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const eventFor = (relPath: string, kind?: WorkspaceEvent["kind"]) => () => events.find((e) => e.relPath === relPath && (!kind || e.kind === kind));
/** Writes a file and waits for its event: everything written before it has been reported by then. */
async function settle(): Promise<void> {
  const name = `memory/sentinel-${Math.random().toString(36).slice(2)}.md`;
  writeFileSync(path.join(ws, name), "s");
  await waitFor(name, eventFor(name));
}

describe("WorkspaceWatcher", () => {
  it("reports a hand edit of USER.md as a hand edit", async () => {
    await start();
    appendFileSync(path.join(ws, "USER.md"), "- Name: Ada\n");
    expect(await waitFor("USER.md change", eventFor("USER.md"))).toEqual({ kind: "change", relPath: "USER.md", handEdit: true });
  });

  it("reports the daemon's own appends, announced with expectOwnWrite, as not hand edits", async () => {
    const w = await start();
    const now = Date.now();
    const first = appendToDailyLog(ws, { kind: "main" }, now, TZ, "### entry 1\n");
    w.expectOwnWrite(first.relPath);
    expect(await waitFor("log add", eventFor(first.relPath, "add"))).toEqual({ kind: "add", relPath: first.relPath, handEdit: false });
    appendToDailyLog(ws, { kind: "main" }, now, TZ, "### entry 2\n");
    w.expectOwnWrite(first.relPath);
    expect(await waitFor("log change", eventFor(first.relPath, "change"))).toEqual({ kind: "change", relPath: first.relPath, handEdit: false });

  });

  it("still knows its own append when the wall clock steps forward before the event arrives (NTP, a resumed laptop)", async () => {
    const w = await start();
    const first = appendToDailyLog(ws, { kind: "main" }, Date.now(), TZ, "### entry 1\n");
    w.expectOwnWrite(first.relPath);
    const realNow = Date.now;
    Date.now = () => realNow() + 10 * 60_000;
    try {
      expect(await waitFor("log add", eventFor(first.relPath, "add"))).toEqual({ kind: "add", relPath: first.relPath, handEdit: false });
    } finally {
      Date.now = realNow;
    }
  });

  it("does not watch inside shared chats' folders: watched folders do not grow with the number of chats", async () => {
    const w = await start();
    appendToDailyLog(ws, { kind: "shared", chat: "telegram_-1" }, Date.now(), TZ, "### group entry\n");
    await sleep(600);
    const withOne = w.watchedFolders();
    for (let i = 2; i <= 30; i++) appendToDailyLog(ws, { kind: "shared", chat: `telegram_-${i}` }, Date.now(), TZ, "### group entry\n");
    writeFileSync(path.join(ws, "sentinel.md"), "x\n");
    await waitFor("the sentinel", eventFor("sentinel.md"));
    expect(w.watchedFolders()).toBe(withOne);
    expect(events.filter((e) => e.relPath.startsWith("memory/chats/"))).toEqual([]);
  });

  it("lets the owner win when they edit right after the daemon's append", async () => {
    const w = await start();
    const { relPath, absPath } = appendToDailyLog(ws, { kind: "main" }, Date.now(), TZ, "### entry\n");
    w.expectOwnWrite(relPath);
    appendFileSync(absPath, "owner's note\n");
    expect(await waitFor("log event", eventFor(relPath))).toMatchObject({ relPath, handEdit: true });
    // The expectation was used up: a later edit is the owner's too.
    events = [];
    appendFileSync(absPath, "another note\n");
    expect(await waitFor("log change", eventFor(relPath))).toMatchObject({ kind: "change", handEdit: true });
  });

  it("reports an editor's save through a temp file and a rename as one change", async () => {
    await start();
    const tmp = path.join(ws, ".USER.md.swp");
    writeFileSync(tmp, "# Owner\n\n- Name: Grace\n");
    renameSync(tmp, path.join(ws, "USER.md"));
    const other = path.join(ws, "MEMORY.md.tmp-123");
    writeFileSync(other, "# Memory\n");
    renameSync(other, path.join(ws, "MEMORY.md"));
    await waitFor("USER.md change", eventFor("USER.md"));
    await waitFor("MEMORY.md change", eventFor("MEMORY.md"));
    await settle();
    // Two files saved at once: their events may arrive in either order.
    const seen = events.filter((e) => !e.relPath.includes("sentinel")).sort((a, b) => a.relPath.localeCompare(b.relPath));
    expect(seen).toEqual([
      { kind: "change", relPath: "MEMORY.md", handEdit: true },
      { kind: "change", relPath: "USER.md", handEdit: true },
    ]);
  });

  it("ignores other files, dot-folders and node_modules", async () => {
    await start();
    writeFileSync(path.join(ws, "notes.txt"), "x");
    mkdirSync(path.join(ws, ".git"));
    writeFileSync(path.join(ws, ".git", "HEAD.md"), "x");
    mkdirSync(path.join(ws, "node_modules", "pkg"), { recursive: true });
    writeFileSync(path.join(ws, "node_modules", "pkg", "README.md"), "x");
    mkdirSync(path.join(ws, "projects"));
    writeFileSync(path.join(ws, "projects", "plan.md"), "x");
    writeFileSync(path.join(base, ".hearth", "outside.md"), "x");
    await waitFor("projects/plan.md", eventFor("projects/plan.md"));
    await settle();
    expect(events.filter((e) => !e.relPath.includes("sentinel"))).toEqual([{ kind: "add", relPath: "projects/plan.md", handEdit: true }]);
  });

  it("reports a symlink with a markdown name, but never walks into a linked folder", async () => {
    mkdirSync(path.join(base, "elsewhere"));
    writeFileSync(path.join(base, "elsewhere", "secret.md"), "x");
    mkdirSync(path.join(ws, "memory", "chats"), { recursive: true });
    symlinkSync(path.join(base, "elsewhere"), path.join(ws, "memory", "chats", "telegram_-1"));
    symlinkSync(ws, path.join(ws, "loop"));
    await start();
    symlinkSync("../../USER.md", path.join(ws, "memory", "chats", "today.md"));
    await waitFor("the symlink's add", eventFor("memory/chats/today.md", "add"));
    writeFileSync(path.join(base, "elsewhere", "secret.md"), "changed");
    writeFileSync(path.join(base, "elsewhere", "new.md"), "x");
    await settle();
    expect(events.filter((e) => !e.relPath.includes("sentinel"))).toEqual([{ kind: "add", relPath: "memory/chats/today.md", handEdit: true }]);
  });

  it("watches the real folder of a workspace reached through a symlink", async () => {
    const linked = path.join(base, "ws-link");
    symlinkSync(ws, linked);
    watcher = await WorkspaceWatcher.start({ workspace: linked, log, onEvent: (e) => events.push(e) });
    appendFileSync(path.join(ws, "USER.md"), "- Name: Ada\n");
    expect(await waitFor("USER.md change", eventFor("USER.md"))).toEqual({ kind: "change", relPath: "USER.md", handEdit: true });
  });

  it("survives the workspace folder being deleted and recreated", async () => {
    await start(() => gone === 1 && cpSync(templates, ws, { recursive: true })); // the daemon's reaction, the first time
    rmSync(ws, { recursive: true });
    await waitFor("onWorkspaceGone", () => gone === 1);
    // chokidar 6 calls a file deleted and recreated within its atomic window a "change".
    await waitFor("recreated USER.md", eventFor("USER.md"));
    events = [];
    appendFileSync(path.join(ws, "USER.md"), "- Name: Ada\n");
    expect(await waitFor("USER.md change", eventFor("USER.md"))).toEqual({ kind: "change", relPath: "USER.md", handEdit: true });

    // Gone again, and back later (not from inside the callback); logged once per disappearance.
    rmSync(ws, { recursive: true });
    await waitFor("second onWorkspaceGone", () => gone === 2);
    await new Promise((r) => setTimeout(r, 300));
    mkdirSync(ws);
    writeFileSync(path.join(ws, "SOUL.md"), "# Soul\n");
    await waitFor("SOUL.md add", eventFor("SOUL.md", "add"));
    events = [];
    appendFileSync(path.join(ws, "SOUL.md"), "- Be kind.\n");
    await waitFor("SOUL.md change", eventFor("SOUL.md", "change"));
    expect(lines.filter((l) => l.event.startsWith("watcher.workspace_deleted"))).toHaveLength(2);
    expect(gone).toBe(2);
  });

  it("logs a file replaced by a directory of the same name once, and reports the file gone", async () => {
    await start();
    rmSync(path.join(ws, "MEMORY.md"));
    mkdirSync(path.join(ws, "MEMORY.md")); // at once: chokidar itself reports nothing for this
    await waitFor("MEMORY.md unlink", eventFor("MEMORY.md", "unlink"));
    rmSync(path.join(ws, "USER.md"));
    await waitFor("USER.md unlink", eventFor("USER.md", "unlink"));
    mkdirSync(path.join(ws, "USER.md")); // later: chokidar reports the directory
    writeFileSync(path.join(ws, "USER.md", "inner.md"), "x");
    await waitFor("inner.md", eventFor("USER.md/inner.md"));
    await settle();
    const warned = () => lines.filter((l) => l.event === "watcher.directory_at_file_name").map((l) => l.path).sort();
    await waitFor("two warnings", () => warned().length === 2);
    expect(warned()).toEqual(["MEMORY.md", "USER.md"]);
    // It becomes a file again: reported (as a change: chokidar merges the quick unlink + add).
    rmSync(path.join(ws, "MEMORY.md"), { recursive: true });
    writeFileSync(path.join(ws, "MEMORY.md"), "# Memory\n");
    await waitFor("MEMORY.md back", () => events.find((e) => e.relPath === "MEMORY.md" && e.kind !== "unlink"));
    // …and turning it into a directory again is news again.
    events = [];
    rmSync(path.join(ws, "MEMORY.md"));
    mkdirSync(path.join(ws, "MEMORY.md"));
    await waitFor("third warning", () => warned().length === 3);
  });

  it("keeps working when the event handler throws", async () => {
    let calls = 0;
    watcher = await WorkspaceWatcher.start({
      workspace: ws,
      log,
      onEvent: (e) => {
        calls++;
        events.push(e);
        throw new Error("consumer bug");
      },
    });
    appendFileSync(path.join(ws, "USER.md"), "x\n");
    await waitFor("USER.md", eventFor("USER.md"));
    appendFileSync(path.join(ws, "SOUL.md"), "x\n");
    await waitFor("SOUL.md", eventFor("SOUL.md"));
    expect(calls).toBe(2);
    expect(lines.filter((l) => l.event === "watcher.handler_failed")).toHaveLength(2);
  });

  it("leaves no handles after close: the process exits on its own", async () => {
    const moduleUrl = pathToFileURL(path.resolve(import.meta.dirname, "../../src/memory/watcher.ts")).href;
    const script = `
      import { WorkspaceWatcher } from ${JSON.stringify(moduleUrl)};
      import { appendFileSync, mkdirSync, rmSync } from "node:fs";
      const ws = ${JSON.stringify(ws)};
      const seen = [];
      const w = await WorkspaceWatcher.start({ workspace: ws, log: { debug() {}, info() {}, warn() {}, error() {}, child() { return this; } }, onEvent: (e) => seen.push(e.relPath) });
      appendFileSync(ws + "/USER.md", "x\\n");
      rmSync(ws + "/MEMORY.md"); mkdirSync(ws + "/MEMORY.md");
      while (!seen.includes("USER.md") || !seen.includes("MEMORY.md")) await new Promise((r) => setTimeout(r, 20));
      appendFileSync(ws + "/SOUL.md", "x\\n"); // an event still settling when close() runs
      await w.close();
      console.log("closed", seen.join(","));
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => {
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.on("exit", (c) => {
        clearTimeout(killer);
        resolve(c);
      });
    });
    expect(out).toContain("closed");
    expect(code).toBe(0);
  });
});
