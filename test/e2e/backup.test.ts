// Backups through the real CLI and daemon: made while the daemon runs, verified, restored into a
// new folder byte for byte, and started on; damage and a non-empty target are refused.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { main } from "../../src/cli.ts";
import { CONFIG_VERSION } from "../../src/config/migrations.ts";
import { requestText, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let daemon: Daemon | undefined;
let restored: Daemon | undefined;
let work: string;
let home: string;
let manifest: { files: Array<{ path: string; size: number; sha256: string }>; left: Array<{ path: string; reason: string }> };

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** `hearth ARGS` in this process, on `home` (HEARTH_HOME) — the same code as the command, without a process start per call. */
async function hearth(args: string[], on = home): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = { code: 0, stdout: "", stderr: "" };
  const sink = (key: "stdout" | "stderr") => new Writable({ write: (c, _e, cb) => ((r[key] += String(c)), cb()) });
  const saved = process.env.HEARTH_HOME;
  process.env.HEARTH_HOME = on;
  try {
    r.code = await main(args, { stdin: process.stdin, stdout: sink("stdout"), stderr: sink("stderr") });
  } finally {
    if (saved === undefined) delete process.env.HEARTH_HOME;
    else process.env.HEARTH_HOME = saved;
  }
  return r;
}

beforeAll(async () => {
  fake = await startFakeModel();
  work = mkdtempSync(join(tmpdir(), "hearth-bk-"));
  // A config from before versions with the bot token in it: the start upgrades it, moving the
  // token to .env and keeping the old file as config.json.v0.bak, as on a real owner's machine.
  // The Bot API root is a closed loopback port: the channel only retries, nothing leaves the machine.
  home = makeHome({ channels: { telegram: { token: "123:secret-token-value", ownerIds: ["42"], apiRoot: "http://127.0.0.1:9" } } });
  writeFileSync(join(home, ".env"), "ANTHROPIC_API_KEY=sk-never-in-a-backup\n", { mode: 0o600 });
  // An MCP server's OAuth tokens, as `hearth mcp login` keeps them.
  mkdirSync(join(home, "mcp-auth"), { mode: 0o700 });
  writeFileSync(join(home, "mcp-auth", "notes.json"), '{"tokens":{"access_token":"at-never-in-a-backup","refresh_token":"rt-never-in-a-backup"}}\n', { mode: 0o600 });
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
  fake.enqueue(text("Noted: your cat is called Pixel."));
  expect((await daemon.hearth(["chat", "-m", "my cat is called Pixel"])).code).toBe(0);
  expect((await hearth(["cron", "add", "--name", "Stretch", "--every", "1h", "--message", "time to stretch"])).code).toBe(0);
  mkdirSync(join(home, "workspace", "media", "2026-11"), { recursive: true });
  writeFileSync(join(home, "workspace", "media", "2026-11", "2026-11-25-0123456789ab.jpg"), Buffer.from([0xff, 0xd8, 0xff, 0x00, 0x01, 0x02]));
  // A record half-written at the moment of the backup: the archive stops at the last whole one.
  writeFileSync(join(home, "usage.jsonl"), readFileSync(join(home, "usage.jsonl"), "utf8") + '{"half":');
}, 120_000);

afterAll(async () => {
  await cleanupDaemon(daemon);
  await cleanupDaemon(restored);
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

describe("hearth backup", () => {
  it("without --out writes into the home's backups folder, not the folder it is run from (the checkout, by the README)", async () => {
    const checkout = join(work, "checkout");
    mkdirSync(checkout);
    const made = await runHearth(["backup", "create"], isolatedEnv({ HEARTH_HOME: home }), { cwd: checkout });
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const written = /^Backup written: (\S+) \(/.exec(made.stdout)?.[1];
    expect(written).toMatch(new RegExp(`^${join(home, "backups")}/hearth-backup-\\d{8}-\\d{6}\\.tar\\.gz$`));
    expect(statSync(written!).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "backups")).mode & 0o777).toBe(0o700);
    expect(readdirSync(checkout)).toEqual([]);
    // Not one of its own files: the next backup leaves the earlier ones out.
    const again = await runHearth(["backup", "create"], isolatedEnv({ HEARTH_HOME: home }), { cwd: checkout });
    expect(again.stdout).toContain("\nLeft out: backups (earlier backups)\n");
    rmSync(join(home, "backups"), { recursive: true });
  });

  it("round trip: create while running → verify → restore elsewhere → same bytes, and the daemon remembers", async () => {
    const archive = join(work, "home.tar.gz");
    const made = await hearth(["backup", "create", "--out", archive]);
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const lines = made.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^Backup written: ${archive} \\(\\d+ files, [\\d.]+ kB\\)$`));
    expect(lines.slice(1)).toEqual([
      "Left out: .env (secrets; add --include-secrets to keep them)",
      "Left out: config.json.v0.bak (secrets; add --include-secrets to keep them)",
      "Left out: index (the search index; rebuilt at the next start)",
      "Left out: mcp-auth (secrets; add --include-secrets to keep them)",
    ]);
    // Neither key is anywhere in the archive.
    const whole = gunzipSync(readFileSync(archive)).toString("latin1");
    expect(whole.includes("secret-token-value")).toBe(false);
    expect(whole.includes("sk-never-in-a-backup")).toBe(false);
    expect(whole.includes("-never-in-a-backup")).toBe(false);
    expect(statSync(archive).mode & 0o777).toBe(0o600);

    const verified = await hearth(["backup", "verify", archive]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^OK: all \d+ files match the manifest \(made .+ by Hearth 0\.1\.0\)\.\n$/);

    const target = join(work, "restored");
    const restore = await hearth(["backup", "restore", archive, "--home", target]);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    // It names what the restored home lacks, and the command that adds it.
    expect(restore.stdout).toBe(
      `Restored ${/^Restored (\d+) files/.exec(restore.stdout)?.[1]} files into ${target}.\n` +
        "Left out: .env (secrets; add --include-secrets to keep them)\n" +
        "Left out: config.json.v0.bak (secrets; add --include-secrets to keep them)\n" +
        "Left out: index (the search index; rebuilt at the next start)\n" +
        "Left out: mcp-auth (secrets; add --include-secrets to keep them)\n" +
        "The restored home has no .env (the backup left its secrets out), so it lacks:\n" +
        "  the model's API key (ANTHROPIC_API_KEY): Hearth does not start without it\n" +
        "  the Telegram bot token (TELEGRAM_BOT_TOKEN): Hearth starts without Telegram\n" +
        `Add them with \`HEARTH_HOME=${target} npx hearth setup\`, or copy your old .env into ${target}.\n`,
    );

    manifest = JSON.parse(gunzipToManifest(readFileSync(archive)));
    const paths = manifest.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(["sessions/main.jsonl", "cron/jobs.json", "usage.jsonl", "workspace/media/2026-11/2026-11-25-0123456789ab.jpg", "config.json"]));
    expect(paths.some((p) => p.startsWith("index/") || p === ".env" || p.endsWith(".bak") || p === "gateway.lock" || p === "gateway.sock")).toBe(false);
    for (const f of manifest.files) {
      const bytes = readFileSync(join(target, f.path));
      expect(sha(bytes), f.path).toBe(f.sha256);
      if (!["usage.jsonl", "config.json", "inbox.jsonl", "outbox.jsonl", "sessions/index.json"].includes(f.path) && !f.path.startsWith("history.git/")) {
        expect(bytes.equals(readFileSync(join(home, f.path))), f.path).toBe(true);
      }
    }
    // Whole records only; the upgraded config.json, without the token it handed to .env.
    expect(readFileSync(join(target, "usage.jsonl"), "utf8")).toBe(readFileSync(join(home, "usage.jsonl"), "utf8").replace(/\{"half":$/u, ""));
    expect(JSON.parse(readFileSync(join(target, "config.json"), "utf8"))).toEqual({ version: CONFIG_VERSION, channels: { telegram: { ownerIds: ["42"], apiRoot: "http://127.0.0.1:9" } } });
    expect(readdirSync(target)).not.toContain(".env");
    expect(statSync(target).mode & 0o777).toBe(0o700);

    // The restored home starts (its index rebuilt) and the next request holds the old conversation.
    // Telegram, configured but without its token, is listed as not running, with why and the fix.
    await daemon!.stop();
    restored = await startDaemon(target, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
    const noToken = `no bot token (TELEGRAM_BOT_TOKEN in ${join(target, ".env")} or the environment, or channels.telegram.token in config.json): \`npx hearth setup\` adds it`;
    const status = await restored.hearth(["status"]);
    expect(status.stdout.split("\n").filter((l) => l.startsWith("  telegram "))).toEqual([`  telegram   not running: ${noToken}`]);
    expect(restored.log()).toContain(`"notRunning":{"telegram":${JSON.stringify(noToken)}}`);
    fake.enqueue(text("Pixel, of course."));
    const asked = await restored.hearth(["chat", "-m", "what is my cat called?"]);
    expect(asked.stdout).toBe("Pixel, of course.\n");
    const last = requestText(fake.requests.at(-1)!);
    expect(last).toContain("my cat is called Pixel");
    expect(last).toContain("Noted: your cat is called Pixel.");
  }, 120_000);

  it("one flipped byte fails verify, naming the file; restore refuses it and changes nothing", async () => {
    const archive = join(work, "home.tar.gz");
    const tarBytes = gunzipSync(readFileSync(archive));
    const needle = Buffer.from("time to stretch");
    const at = tarBytes.indexOf(needle);
    expect(at).toBeGreaterThan(0);
    tarBytes[at] = tarBytes[at]! ^ 0x01;
    const damaged = join(work, "damaged.tar.gz");
    writeFileSync(damaged, gzipSync(tarBytes));
    const verified = await hearth(["backup", "verify", damaged]);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(new RegExp(`^FAILED: ${damaged}\n  cron/jobs\\.json: its bytes do not match the manifest \\(sha256 [0-9a-f]{12}…, expected [0-9a-f]{12}…\\)\n$`));

    const target = join(work, "never");
    const restore = await hearth(["backup", "restore", damaged, "--home", target]);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain("cron/jobs.json: its bytes do not match the manifest");
    expect(() => statSync(target)).toThrow();
  }, 60_000);

  it("restore onto a non-empty home without --force is refused and changes nothing; --force moves it aside", async () => {
    const archive = join(work, "home.tar.gz");
    const target = join(work, "occupied");
    mkdirSync(target);
    writeFileSync(join(target, "notes.md"), "mine\n");
    const refused = await hearth(["backup", "restore", archive, "--home", target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`hearth: ${target} is not empty; nothing was changed. Restore into an empty folder (--home DIR), or add --force to move the current home aside first.\n`);
    expect(readdirSync(target)).toEqual(["notes.md"]);

    const running = await hearth(["backup", "restore", archive, "--home", restored!.home, "--force"]);
    expect(running.code).toBe(1);
    expect(running.stderr).toBe(`hearth: Hearth is running on ${restored!.home} (pid ${restored!.proc.pid}); nothing was changed. Stop it first, then restore.\n`);

    const forced = await hearth(["backup", "restore", archive, "--home", target, "--force"]);
    expect(forced.code).toBe(0);
    const aside = /The previous home was moved to (.+)\.\n/u.exec(forced.stdout)?.[1];
    expect(aside).toBeDefined();
    expect(readFileSync(join(aside!, "notes.md"), "utf8")).toBe("mine\n");
    expect(readFileSync(join(target, "cron", "jobs.json"), "utf8")).toContain("time to stretch");
  }, 60_000);
});

/** The manifest's bytes, read straight from the tar (its first entry: a 512-byte header, then the data). */
function gunzipToManifest(gz: Buffer): string {
  const tarBytes = gunzipSync(gz);
  expect(tarBytes.subarray(0, 13).toString()).toBe("manifest.json");
  const size = parseInt(tarBytes.subarray(124, 136).toString().replace(/\0.*$/u, "").trim(), 8);
  return tarBytes.subarray(512, 512 + size).toString("utf8");
}
