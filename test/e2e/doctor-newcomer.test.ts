// `hearth doctor` as a new user meets it: a config.json with a mistake is one problem, not also
// a false "no API key" while the key sits in .env (the other checks read .env as start does), and
// a missing key's fix names .env, where keys live; a warning ("!") is not "Everything looks fine".
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome } from "../support/daemon.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";

let home: string;
let local: FakeOpenAI | undefined;
afterEach(async () => {
  await local?.close();
  local = undefined;
  rmSync(home, { recursive: true, force: true });
});

const lines = (stdout: string, name: string) => {
  const all = stdout.split("\n");
  const i = all.findIndex((l) => l.slice(2).startsWith(`${name}:`));
  return i < 0 ? [] : [all[i]!, ...(all[i + 1]?.startsWith("    fix: ") ? [all[i + 1]!] : [])];
};

describe("hearth doctor with an invalid config.json", () => {
  it("finds the key in .env: no false 'no Anthropic API key' beside the config problem", async () => {
    home = makeHome({ agent: { maxTurns: "many" } });
    writeFileSync(join(home, ".env"), "ANTHROPIC_API_KEY=sk-ant-in-dotenv-123456\n", { mode: 0o600 });
    const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home }));
    expect(lines(r.stdout, "api key")).toEqual(["✓ api key: set (from .env; not shown)"]);
    expect(r.stdout).toContain("\n✗ config: ");
    expect(r.stdout).not.toContain("✗ api key");
    expect(r.code).toBe(2);
  });

  it("with no key anywhere, the fix names .env, never config.json", async () => {
    home = makeHome({ agent: { maxTurns: "many" } });
    const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home }));
    expect(lines(r.stdout, "api key")).toEqual([
      "✗ api key: no Anthropic API key",
      `    fix: \`npx hearth setup\` puts it in ${join(home, ".env")}, or add ANTHROPIC_API_KEY=sk-ant-… there yourself (or export it)`,
    ]);
  });
});

describe("hearth doctor --online with a warning and no problem", () => {
  it("does not end with Everything looks fine", async () => {
    local = await startFakeOpenAI({ models: ["gemma"], noToolModels: ["gemma"] });
    home = makeHome({ model: { name: "small/gemma" }, providers: { small: { type: "openai", baseUrl: local.baseUrl } } });
    const r = await runHearth(["doctor", "--online"], isolatedEnv({ HEARTH_HOME: home }), { timeoutMs: 40_000 });
    expect(lines(r.stdout, "provider small")[0]).toMatch(/^! provider small: .*but tool calling failed/);
    const warned = r.stdout.split("\n").filter((l) => l.startsWith("! ")).length;
    const failed = r.stdout.split("\n").filter((l) => l.startsWith("✗ ")).length;
    expect(r.stdout).not.toContain("Everything looks fine.");
    expect(r.stdout.endsWith(failed ? `\n${failed} problem${failed === 1 ? "" : "s"} found, and ${warned} warning${warned === 1 ? "" : "s"} (!).\n` : `\nNo problems; ${warned} warning${warned === 1 ? "" : "s"} (!) above.\n`)).toBe(true);
  });
});
