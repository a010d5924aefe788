// Backup archives are outside content: a link, an unlisted file or a manifest path that leaves the
// home fails verification, and restore then changes nothing.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { restoreBackup, verifyBackup } from "../../src/backup/archive.ts";
import { withoutSecrets } from "../../src/backup/snapshot.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-arc-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** An archive with `a.md` listed in the manifest, plus whatever `extra` puts in its staging folder. */
async function archiveWith(extra: (staging: string) => string[], files = [{ path: "a.md", size: 2, sha256: sha("a\n") }]): Promise<string> {
  const staging = join(dir, "staging");
  mkdirSync(join(staging, "home"), { recursive: true });
  writeFileSync(join(staging, "home", "a.md"), "a\n");
  writeFileSync(join(staging, "manifest.json"), JSON.stringify({ format: "hearth-backup", version: 1, createdAt: "2026-11-25T00:00:00.000Z", hearth: "0.1.0", files, left: [] }));
  const out = join(dir, "evil.tar.gz");
  await tar.c({ gzip: true, file: out, cwd: staging }, ["manifest.json", "home/a.md", ...extra(staging)]);
  return out;
}

describe("hostile archives", () => {
  it("a symlink entry fails verification and restore writes nothing", async () => {
    const file = await archiveWith((staging) => {
      symlinkSync("/etc/hostname", join(staging, "home", "link.md"));
      return ["home/link.md"];
    });
    expect(await verifyBackup(file)).toMatchObject({ ok: false, problems: ["home/link.md: a SymbolicLink entry; a Hearth backup holds only files"] });
    const target = join(dir, "home");
    expect(await restoreBackup(file, target, { force: false })).toMatchObject({ type: "invalid" });
    expect(existsSync(target)).toBe(false);
  });

  it("a file the manifest does not list fails verification", async () => {
    const file = await archiveWith((staging) => {
      writeFileSync(join(staging, "home", "extra.md"), "sneaked in\n");
      return ["home/extra.md"];
    });
    expect(await verifyBackup(file)).toMatchObject({ ok: false, problems: ["home/extra.md: in the archive but not in the manifest"] });
  });

  it("a manifest path that leaves the home is refused", async () => {
    const file = await archiveWith(() => [], [{ path: "../outside.md", size: 2, sha256: sha("a\n") }]);
    const result = await verifyBackup(file);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems[0]).toBe("manifest.json: not a Hearth backup manifest (must be a plain relative path)");
  });
});

describe("a damaged archive", () => {
  it("a cut-off archive fails verification, saying where it broke", async () => {
    const file = await archiveWith((staging) => {
      writeFileSync(join(staging, "home", "big.md"), randomBytes(200_000));
      return ["home/big.md"];
    });
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const result = await verifyBackup(file);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems[0]).toMatch(/^the archive is damaged at big\.md: /u);
  });
});

describe("config.json without secrets", () => {
  it("blanks every secret value and keeps comments and other settings", () => {
    const text = `{
  // my model
  "model": { "name": "claude-sonnet-5-5", "apiKey": "sk-ant-1" },
  "providers": { "groq": { "apiKey": "gsk-2", "headers": { "X-Key": "h-3" } } },
  "channels": { "telegram": { "token": "123:tg", "ownerIds": ["42"] }, "discord": { "token": "dc" } },
  "mcp": { "servers": { "files": { "command": "x", "env": { "TOKEN": "e-4" } } } }
}`;
    const { text: out, redacted } = withoutSecrets(text);
    expect(redacted.sort()).toEqual(["channels.discord.token", "channels.telegram.token", "mcp.servers.files.env.TOKEN", "model.apiKey", "providers.groq.apiKey", "providers.groq.headers.X-Key"]);
    expect(out).toContain("// my model");
    for (const secret of ["sk-ant-1", "gsk-2", "h-3", "123:tg", '"dc"', "e-4"]) expect(out).not.toContain(secret);
    expect(out).toContain('"ownerIds": ["42"]');
  });
});
