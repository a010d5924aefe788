// The notes whose words enter a context are read-only to every sandboxed command, whatever it
// tries: appending, overwriting, removing or renaming over them, creating one that is missing,
// writing into memory/ or skills/. Hand edits outside the sandbox are untouched. The bwrap tests
// need bubblewrap; without it they say so and skip.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCommand } from "../../../src/agent/tools/exec.ts";
import { probeBwrap, resolveExecSandbox } from "../../../src/agent/tools/sandbox.ts";

const probe = probeBwrap({ PATH: process.env.PATH }, { network: false });
if (!probe.ok) console.warn(`read-only notes tests skipped: ${probe.detail} (install bubblewrap to run them)`);

const NOTES = ["SOUL.md", "IDENTITY.md", "AGENTS.md", "USER.md", "MEMORY.md", "HEARTBEAT.md"];
let home: string;
let ws: string;
beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(tmpdir(), "hearth-notes-")));
  ws = path.join(home, "workspace");
  mkdirSync(path.join(ws, "memory"), { recursive: true });
  mkdirSync(path.join(ws, "proj"));
  for (const n of NOTES) writeFileSync(path.join(ws, n), `# ${n}\n`);
  writeFileSync(path.join(ws, "memory", "2026-12-07.md"), "- 09:00 log\n");
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

// One stream (2>&1): the order of two pipes' output is not fixed on a loaded machine.
const run = (command: string) =>
  runCommand({ command: `exec 2>&1; ${command}`, cwd: ws, timeoutMs: 20_000, signal: new AbortController().signal, sandbox: resolveExecSandbox({ mode: "bwrap", network: false, home, workspace: ws }) });
const bytes = (rel: string) => readFileSync(path.join(ws, rel), "utf8");

describe.skipIf(!probe.ok)("the context's notes in the sandbox", () => {
  it("cannot be appended to, overwritten, removed, renamed over or linked over; the rest of the workspace is writable", async () => {
    const out = await run(
      "echo planted >> MEMORY.md; cat > USER.md <<< planted; rm MEMORY.md; rm -f HEARTBEAT.md; echo planted > proj/new && mv proj/new USER.md; mv -f proj/new HEARTBEAT.md; ln -f proj/new SOUL.md; echo top > top.txt; echo ok > proj/fine; cat top.txt proj/fine",
    );
    expect(out).toEqual({
      content:
        "bash: line 1: MEMORY.md: Read-only file system\n" +
        "bash: line 1: USER.md: Read-only file system\n" +
        "rm: cannot remove 'MEMORY.md': Device or resource busy\n" +
        "rm: cannot remove 'HEARTBEAT.md': Device or resource busy\n" +
        "mv: cannot move 'proj/new' to 'USER.md': Device or resource busy\n" +
        "mv: cannot move 'proj/new' to 'HEARTBEAT.md': Device or resource busy\n" +
        "ln: failed to create hard link 'SOUL.md' => 'proj/new': Device or resource busy\n" +
        "top\nok\n[exit code 0]",
      isError: false,
    });
    for (const n of NOTES) expect(bytes(n)).toBe(`# ${n}\n`);
    expect(bytes("top.txt")).toBe("top\n");
  });

  it("keeps memory/ and skills/ read-only, and makes skills/ (empty) so that it cannot be created", async () => {
    const out = await run("echo planted >> memory/2026-12-07.md; mkdir memory/chats; rm -rf memory; mv memory m2; mkdir -p skills/evil; ls -A skills");
    expect(out).toEqual({
      content:
        "bash: line 1: memory/2026-12-07.md: Read-only file system\n" +
        "mkdir: cannot create directory ‘memory/chats’: Read-only file system\n" +
        "rm: cannot remove 'memory/2026-12-07.md': Read-only file system\n" +
        "mv: cannot move 'memory' to 'm2': Device or resource busy\n" +
        "mkdir: cannot create directory ‘skills/evil’: Read-only file system\n" +
        "[exit code 0]",
      isError: false,
    });
    expect(bytes("memory/2026-12-07.md")).toBe("- 09:00 log\n");
    expect(readdirSync(path.join(ws, "skills"))).toEqual([]);
  });

  it("cannot create a missing note: the top level is then read-only, its other entries still writable", async () => {
    rmSync(path.join(ws, "HEARTBEAT.md"));
    const out = await run("echo planted > HEARTBEAT.md; echo top > top.txt; rm MEMORY.md; echo ok > proj/fine; cat proj/fine");
    expect(out).toEqual({
      content: "bash: line 1: HEARTBEAT.md: Read-only file system\nbash: line 1: top.txt: Read-only file system\nrm: cannot remove 'MEMORY.md': Read-only file system\nok\n[exit code 0]",
      isError: false,
    });
    expect(readdirSync(ws).sort()).toEqual(["AGENTS.md", "IDENTITY.md", "MEMORY.md", "SOUL.md", "USER.md", "memory", "proj", "skills"]);
  });

  it("reads a note a link names read-only too, and cannot replace the link", async () => {
    rmSync(path.join(ws, "USER.md"));
    writeFileSync(path.join(ws, "proj", "user.md"), "# Ann\n");
    const { symlinkSync } = await import("node:fs");
    symlinkSync("proj/user.md", path.join(ws, "USER.md"));
    const out = await run("echo planted >> proj/user.md; rm USER.md; cat USER.md");
    expect(out).toEqual({
      content: "bash: line 1: proj/user.md: Read-only file system\nrm: cannot remove 'USER.md': Read-only file system\n# Ann\n[exit code 0]",
      isError: false,
    });
  });

  it("leaves hand edits outside the sandbox alone", async () => {
    await run("true");
    writeFileSync(path.join(ws, "MEMORY.md"), "# Memory\n- edited by hand\n");
    expect(bytes("MEMORY.md")).toBe("# Memory\n- edited by hand\n");
    expect((await run("cat MEMORY.md")).content).toBe("# Memory\n- edited by hand\n[exit code 0]");
  });
});
