// The skills registry: what a scan loads, what it logs, and the prompt block's stability.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SkillRegistry } from "../../../src/agent/skills/registry.ts";
import { createLogger } from "../../../src/process/log.ts";
import { openMemory, type MemoryService } from "../../../src/memory/memory.ts";
import { waitFor } from "../../support/daemon.ts";

let ws: string;
let other: string;
let memory: MemoryService | undefined;
beforeEach(() => {
  ws = mkdtempSync(join(tmpdir(), "hearth-skills-"));
  other = mkdtempSync(join(tmpdir(), "hearth-skills-other-"));
  memory = undefined;
});
afterEach(async () => {
  await memory?.close();
  rmSync(ws, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

function skill(dir: string, fm: string, body = "Body.\n"): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\n${fm}\n---\n${body}`);
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { log: createLogger({ level: "debug", sink: { write: (l) => lines.push(JSON.parse(l)) } }), lines };
}

describe("SkillRegistry", () => {
  it("logs a broken skill once, with the reason, however often it reloads", () => {
    skill(join(ws, "skills", "bad"), "name: bad");
    const { log, lines } = capture();
    const r = new SkillRegistry({ workspace: ws, log });
    r.reload();
    r.reload();
    expect(lines.filter((l) => l.event === "skills.invalid").map((l) => [l.folder, l.error])).toEqual([["skills/bad", 'invalid front matter: "description" is missing']]);
  });

  it("keeps the same block for a body edit, and refuses linked folders", () => {
    skill(join(ws, "skills", "a"), "name: a\ndescription: A.");
    const r = new SkillRegistry({ workspace: ws, log: capture().log });
    const before = r.promptBlock("main");
    skill(join(ws, "skills", "a"), "name: a\ndescription: A.", "Another body.\n");
    r.reload();
    expect(r.promptBlock("main")).toBe(before);
    expect(r.promptBlock("shared")).toBe("");
    skill(join(other, "outside"), "name: linked\ndescription: From elsewhere.");
    symlinkSync(join(other, "outside"), join(ws, "skills", "linked"));
    r.reload();
    expect(r.list().map((x) => x.name)).toEqual(["a"]);
    expect(r.problems()).toEqual([{ folder: "skills/linked", error: "the folder is a link; skills must be real folders inside the workspace" }]);
  });

  it("a skill folder renamed into place (as `hearth skills add` does) reaches the registry through the watcher", async () => {
    const { log } = capture();
    const r = new SkillRegistry({ workspace: ws, log });
    memory = await openMemory({ workspace: ws, indexPath: join(other, "memory.db"), timezone: "UTC", log, restoreWorkspace: () => {} });
    memory.startBackground();
    await memory.watching();
    memory.onWorkspaceEvent((e) => r.noteWorkspaceEvent(e.relPath));
    mkdirSync(join(ws, "skills"));
    skill(join(ws, "skills", ".incoming"), "name: late\ndescription: Arrived by rename.");
    renameSync(join(ws, "skills", ".incoming"), join(ws, "skills", "late"));
    await waitFor("the renamed skill", () => r.list().map((s) => s.name).join() === "late", 15_000);
  });
});
