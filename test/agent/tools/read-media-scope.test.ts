// The owner's stored attachments (media/YYYY-MM/): the main scope's read shows a picture there
// as an image block; a shared scope never opens them — not by default (no read tool), not when
// read is opened for shared skills, and not when the owner allows read to shared scopes.
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Scope } from "../../../src/agent/messages.ts";
import { scopePermission, withExtensions } from "../../../src/agent/tool-policy.ts";
import { createReadTool } from "../../../src/agent/tools/files.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { picture } from "../../support/media-files.ts";

let workspace: string;
let png: Uint8Array;
const stored = "media/2026-11/2026-11-23-3fa9c1.png";
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-read-media-")));
  await mkdir(path.join(workspace, "media/2026-11"), { recursive: true });
  await mkdir(path.join(workspace, "skills/shared-one"), { recursive: true });
  png = await picture("png");
  await writeFile(path.join(workspace, stored), png);
  await writeFile(path.join(workspace, "media/2026-11/notes.txt"), "the owner's private notes\n");
});
afterEach(() => rm(workspace, { recursive: true, force: true }));

const ctx = (scope: Scope) => ({ signal: new AbortController().signal, workspace, scope, sessionKey: scope === "main" ? "main" : "telegram:group:-5", log: silentLogger });
const refusal = (p: string) => ({ content: `Refused ${JSON.stringify(p)}: media/ holds the owner's private files, which this conversation cannot open.`, isError: true });

describe("read and the owner's media", () => {
  it("main scope: a stored picture comes back as an image block with its bytes", async () => {
    expect(await createReadTool().execute({ path: stored }, ctx("main"))).toEqual({
      content: `The picture ${stored}:`,
      images: [{ type: "image", mediaType: "image/png", data: Buffer.from(png).toString("base64") }],
    });
  });

  it("shared scope, default policy: read is not a tool it may call", () => {
    const permission = withExtensions(scopePermission([]), { sharedAllow: [], mcp: () => null, hasSharedSkills: () => false });
    expect(permission("read", "shared")).toBe("read is only available in the owner's private chat. This conversation can use: memory_search, memory_get, memory_write, send_file.");
  });

  it("shared scope with shared skills: read opens the skills' folders, never media/", async () => {
    const permission = withExtensions(scopePermission([]), { sharedAllow: [], mcp: () => null, hasSharedSkills: () => true });
    expect(permission("read", "shared")).toBeNull();
    const read = createReadTool({ sharedRoots: () => [path.join(workspace, "skills/shared-one")] });
    for (const p of [stored, "media/2026-11/notes.txt", `./skills/../${stored}`]) expect(await read.execute({ path: p }, ctx("shared"))).toEqual(refusal(p));
  });

  it("shared scope where the owner allowed read: the rest of the workspace opens, media/ does not", async () => {
    const permission = withExtensions(scopePermission(["read"]), { sharedAllow: ["read"], mcp: () => null, hasSharedSkills: () => false });
    expect(permission("read", "shared")).toBeNull();
    const read = createReadTool();
    for (const p of [stored, "media/2026-11/notes.txt", "media", path.join(workspace, stored)]) expect(await read.execute({ path: p }, ctx("shared"))).toEqual(refusal(p));
    await writeFile(path.join(workspace, "public.txt"), "hello\n");
    expect((await read.execute({ path: "public.txt" }, ctx("shared"))).isError).toBeUndefined();
  });
});
