// What setup writes into a new home's commented config.json: the template's own lines made live,
// each keeping its explanation, never a second block beside a commented one.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, describe, expect, it } from "vitest";
import { writeSetup } from "../../src/config/setup-config.ts";
import { silentLogger } from "../../src/process/log.ts";

let home: string;
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("setup on init's template", () => {
  it("fills in the commented baseUrl line and turns the commented telegram block into the live one", () => {
    home = mkdtempSync(path.join(os.tmpdir(), "hearth-setup-config-"));
    const file = writeSetup(home, { model: { kind: "anthropic", model: "claude-sonnet-5-5", baseUrl: "http://127.0.0.1:8080", apiKey: "sk-ant-x" }, channels: { telegram: { token: "1:t", ownerId: "42" } } }, silentLogger);
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n");
    const model = lines.indexOf('    "baseUrl": "http://127.0.0.1:8080",    // or set ANTHROPIC_BASE_URL (a proxy or gateway)');
    expect(model).toBeGreaterThan(0);
    // The neighbour keeps its own comment.
    expect(lines).toContain('    "idleTimeoutMs": 60000                    // a silent model stream is retried once after this, then you are told');
    const telegram = lines.indexOf('    "telegram": {');
    expect(lines.slice(telegram, telegram + 7)).toEqual([
      '    "telegram": {',
      '      "ownerIds": [',
      '        "42"',
      "      ]",
      '      // "token": "<token from @BotFather>",  // or set TELEGRAM_BOT_TOKEN',
      '      // "apiRoot": "https://api.telegram.org", // change for a self-hosted Bot API server',
      '      // "dmPolicy": "pairing",               // others\' DMs: pairing (you approve a code) | allowlist | disabled',
    ]);
    expect(text.match(/"telegram": \{/g)).toHaveLength(1);
    expect(text).toContain('    // "discord": {\n');
    const errors: unknown[] = [];
    expect((parse(text, errors as never, { allowTrailingComma: true }) as { model: unknown; channels: unknown })).toMatchObject({ model: { baseUrl: "http://127.0.0.1:8080" }, channels: { telegram: { ownerIds: ["42"] } } });
    expect(errors).toEqual([]);
  });
});
