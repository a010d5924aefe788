// `hearth doctor` names where the model key comes from, as the daemon reads it (the environment,
// then the home's .env, then config.json), and judges bot tokens by the rule setup applies.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctor } from "../../src/cli/doctor.ts";
import { checkDiscordToken } from "../../src/channels/discord/setup.ts";
import { checkTelegramToken } from "../../src/channels/telegram/setup.ts";

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "hearth-doctor-src-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const line = async (name: string, env: NodeJS.ProcessEnv = {}) => {
  const c = (await doctor(home, env)).find((x) => x.name === name)!;
  return `${c.ok ? "✓" : "✗"} ${c.name}: ${c.detail}${c.fix ? ` | fix: ${c.fix}` : ""}`;
};
const write = (file: string, text: string) => writeFileSync(path.join(home, file), text, { mode: 0o600 });

describe("doctor's key source", () => {
  it("a key only in .env is named as from .env", async () => {
    write("config.json", "{}");
    write(".env", "ANTHROPIC_API_KEY=sk-ant-only-in-dotenv\n");
    expect(await line("api key")).toBe("✓ api key: set (from .env; not shown)");
  });

  it("the environment wins over .env; config.json is named only when the key is there", async () => {
    write(".env", "ANTHROPIC_API_KEY=sk-ant-only-in-dotenv\n");
    expect(await line("api key", { ANTHROPIC_API_KEY: "sk-ant-from-the-shell" })).toBe("✓ api key: set (from ANTHROPIC_API_KEY; not shown)");
    rmSync(path.join(home, ".env"));
    write("config.json", JSON.stringify({ model: { apiKey: "sk-ant-in-the-config" } }));
    expect(await line("api key")).toBe("✓ api key: set (from config.json; not shown)");
  });
});

describe("one rule for a bot token's shape", () => {
  it("setup refuses a malformed token before asking the platform, in doctor's words", async () => {
    // A closed port: a request would fail as unreachable, not as malformed.
    expect(await checkTelegramToken("12345:short", "http://127.0.0.1:9")).toEqual({
      ok: false,
      problem: "the token does not look like a bot token (digits, a colon, then about 35 characters); copy it again from @BotFather (/token)",
    });
    expect(await checkDiscordToken("not-a-discord-token", "http://127.0.0.1:9")).toEqual({
      ok: false,
      problem: "the token does not look like a bot token (three parts separated by dots); copy it again from the Developer Portal (Bot → Reset Token)",
    });
    write(".env", "ANTHROPIC_API_KEY=sk-ant-x\nTELEGRAM_BOT_TOKEN=12345:short\n");
    write("config.json", JSON.stringify({ channels: { telegram: { ownerIds: ["42"] } } }));
    expect(await line("telegram")).toBe("✗ telegram: the token does not look like a bot token (digits, a colon, then about 35 characters) | fix: copy it again from @BotFather (/token)");
  });

  it("a token of the right shape passes doctor", async () => {
    write(".env", "ANTHROPIC_API_KEY=sk-ant-x\nTELEGRAM_BOT_TOKEN=123456789:AAE_TEST-token-for-the-emulator-0123\n");
    write("config.json", JSON.stringify({ channels: { telegram: { ownerIds: ["42"] } } }));
    expect(await line("telegram")).toBe("✓ telegram: token set (not shown), owner 42");
  });
});
