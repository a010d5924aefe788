// Operations: `hearth doctor` explains every problem, and no log ever shows a secret.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

let fake: FakeModel;
let home: string;
let daemon: Daemon | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
});

describe("hearth doctor", () => {
  it("reports a broken config, a missing key and a bad cron job, each with a fix, and exits 2 (the config is invalid)", async () => {
    home = makeHome();
    await runHearth(["init"], isolatedEnv({ HEARTH_HOME: home }));
    writeFileSync(join(home, "config.json"), '{ "agent": { "maxTurns": "many" } }');
    mkdirSync(join(home, "cron"), { recursive: true });
    writeFileSync(
      join(home, "cron", "jobs.json"),
      JSON.stringify({ version: 1, jobs: [{ id: "j1", name: "Broken", schedule: { kind: "cron", expr: "61 25 * * *" }, prompt: "hi" }] }),
    );
    const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/✗ config: .*config\.json[\s\S]*agent\.maxTurns[\s\S]*?\n {4}fix: edit .*config\.json/);
    expect(r.stdout).toContain(`✗ api key: no Anthropic API key\n    fix: \`npx hearth setup\` puts it in ${join(home, ".env")}, or add ANTHROPIC_API_KEY=sk-ant-… there yourself (or export it)\n`);
    expect(r.stdout).toMatch(/✗ cron: .*jobs\.json is invalid: .*\n {4}fix: /);
    expect(r.stdout).toMatch(/\n3 problems found, and 1 warning \(!\)\.\n$/);
    expect(r.stdout).toMatch(/✓ node: Node /);
  });

  it("passes on a healthy home without printing the key", async () => {
    home = makeHome();
    const env = isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-doctor-secret-123456" });
    await runHearth(["init"], env);
    const r = await runHearth(["doctor"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✓ api key: set (from ANTHROPIC_API_KEY; not shown)");
    expect(r.stdout + r.stderr).not.toContain("doctor-secret");
  });
});

describe("log redaction", () => {
  let emu: TelegramEmulator;
  beforeEach(async () => {
    emu = await startTelegramEmulator();
  });
  afterEach(async () => {
    await emu.stop();
  });

  it("a daemon with a bot token and an API key never writes either, at debug level, whatever happens", async () => {
    const apiKey = "sk-ant-api03-redaction-test-key-0123456789";
    home = makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: ["100"] } } });
    daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: fake.url, HEARTH_LOG: "debug" });
    await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
    const owner = emu.user({ userId: 100, firstName: "Ann" });

    // A tool that tries to read the secrets from its environment, then an answer.
    fake.enqueue(toolCall("exec", { command: 'echo "[$ANTHROPIC_API_KEY][$TELEGRAM_BOT_TOKEN]"' }), text("Done."));
    await owner.send("run it");
    // The final answer, not the tool's preview: a message sent while the run is still going
    // would join it (steering) and share its one reply.
    await waitFor("the first answer", () => emu.botMessages(100)[0]?.text === "Done.");
    // A model failure whose text (logged, and told to the user) quotes the key.
    fake.enqueue({ type: "http_error", status: 400, errorType: "invalid_request_error", message: `bad header x-api-key: ${apiKey}` });
    await owner.send("again");
    // Its message is created with a placeholder, then shows the notice.
    await waitFor("the notice", () => (emu.botMessages(100)[1]?.text ?? "…") !== "…");
    const replies = emu.botMessages(100).map((m) => m.text).join("\n");
    expect(replies).toContain("[redacted]");
    expect(replies).not.toContain(apiKey);
    await daemon.hearth(["status", "--json"]);
    await daemon.hearth(["doctor"]);
    await daemon.stop();

    const outputs = [daemon.log(), ...filesUnder(home).map((f) => readFileSync(f, "utf8"))];
    for (const out of outputs) {
      expect(out).not.toContain(apiKey);
      expect(out).not.toContain(emu.token);
    }
    expect(daemon.log()).toContain("model.failed");
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain("[][]");
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    const st = statSync(p);
    return st.isDirectory() ? filesUnder(p) : st.isFile() && st.size < 5_000_000 && !name.endsWith(".db") ? [p] : [];
  });
}
