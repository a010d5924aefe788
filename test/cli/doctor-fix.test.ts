// `hearth doctor --fix` repairs what it can and says exactly what it did; a second run finds
// nothing to fix. Nothing is deleted: the damaged file and the old config are kept.
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/doctor.ts";
import { initHome } from "../../src/config/init.ts";
import { readSecrets } from "../../src/config/secrets.ts";

let root: string;
let home: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "hearth-fix-"));
  home = path.join(root, "home");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function doctorFix(): Promise<{ code: number; out: string }> {
  let out = "";
  const stdout = new PassThrough();
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await runDoctor(home, { stdout }, { PATH: process.env.PATH, HOME: root }, { fix: true });
  return { code, out };
}

/** The part before the usual checks. */
const fixPart = (out: string) => out.slice(0, out.indexOf("\n\n") + 1);

describe("hearth doctor --fix", () => {
  it("migrates the config, fixes modes, removes a stale lock, sets damaged state aside and restores missing workspace files, saying each", async () => {
    initHome(home);
    const fixture = path.join(import.meta.dirname, "..", "config", "fixtures", "config-versions", "v0-hand-written.jsonc");
    copyFileSync(fixture, path.join(home, "config.json"));
    chmodSync(path.join(home, "config.json"), 0o644);
    chmodSync(home, 0o755);
    writeFileSync(path.join(home, "gateway.lock"), `${JSON.stringify({ pid: 2_147_000_000, startTicks: "1", bootId: "x", startedAt: "2026-01-01T00:00:00Z" })}\n`);
    writeFileSync(path.join(home, "sessions", "index.json"), "{ not json");
    unlinkSync(path.join(home, "workspace", "SOUL.md"));

    const { out } = await doctorFix();
    const damaged = readdirSync(path.join(home, "sessions")).find((n) => n.startsWith("index.json.damaged-"));
    expect(damaged).toBeDefined();
    expect(fixPart(out)).toBe(
      "Fixed:\n" +
        "  ✓ config: migrated config.json from version 0 to 3 (the old file kept as config.json.v0.bak); moved ANTHROPIC_API_KEY, TELEGRAM_BOT_TOKEN to .env\n" +
        // (The migrated config.json was written owner-only already.)
        "  ✓ mode: the home folder was 755, now 700 (owner only)\n" +
        "  ✓ lock: removed gateway.lock, left by pid 2147000000, which is gone\n" +
        `  ✓ state: sessions/index.json was damaged; set aside as sessions/${damaged}\n` +
        "  ✓ workspace: restored SOUL.md from the template\n",
    );
    expect(readFileSync(path.join(home, "config.json.v0.bak"), "utf8")).toBe(readFileSync(fixture, "utf8"));
    expect(readSecrets(home).ANTHROPIC_API_KEY).toBe("sk-ant-fixture-v0-key-000000000000");
    expect(statSync(path.join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(existsSync(path.join(home, "gateway.lock"))).toBe(false);
    expect(readFileSync(path.join(home, "sessions", damaged!), "utf8")).toBe("{ not json");
    expect(existsSync(path.join(home, "workspace", "SOUL.md"))).toBe(true);
    // The usual checks follow, and list what is left: the damaged copy to look at.
    expect(out).toContain(`✗ state: sessions/index.json was damaged; the original is kept as sessions/${damaged}`);

    const again = await doctorFix();
    expect(fixPart(again.out)).toBe("Nothing needed fixing.\n");
  });

  it("a secrets file others can read is a problem doctor names, and --fix makes it and config.json owner-only", async () => {
    initHome(home);
    writeFileSync(path.join(home, ".env"), "ANTHROPIC_API_KEY=sk-ant-x\n", { mode: 0o644 });
    chmodSync(path.join(home, ".env"), 0o644);
    chmodSync(path.join(home, "config.json"), 0o644);
    // A copy an earlier upgrade kept, with the key it moved, readable by all.
    writeFileSync(path.join(home, "config.json.v1.bak"), '{ "model": { "apiKey": "sk-ant-x" } }\n', { mode: 0o644 });
    chmodSync(path.join(home, "config.json.v1.bak"), 0o644);
    let out = "";
    const stdout = new PassThrough();
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    await runDoctor(home, { stdout }, { PATH: process.env.PATH, HOME: root });
    expect(out).toContain(`✗ secrets file: ${path.join(home, ".env")} holds keys and is readable by other users (mode 644)\n`);
    const fixed = await doctorFix();
    expect(fixPart(fixed.out)).toBe(
      "Fixed:\n  ✓ mode: .env was 644, now 600 (owner only)\n  ✓ mode: config.json was 644, now 600 (owner only)\n  ✓ mode: config.json.v1.bak was 644, now 600 (owner only)\n",
    );
    expect(fixed.out).not.toContain("secrets file");
  });
});
