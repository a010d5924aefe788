// The terminal's smaller promises, through the real `hearth` command: errors on stderr with a
// non-zero exit, hints that can be followed as written, and no key sent that the owner never set.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";

// Each test runs real `hearth` processes (up to four): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

let home: string;
let oai: FakeOpenAI;
let anth: FakeModel;
beforeEach(async () => {
  oai = await startFakeOpenAI({ models: ["qwen3"] });
  anth = await startFakeModel();
});
afterEach(async () => {
  await Promise.all([oai.close(), anth.close()]);
  if (home) rmSync(home, { recursive: true, force: true });
});

describe("a provider whose key variable is unset", () => {
  const labHome = () =>
    makeHome({ model: { name: "lab/qwen3" }, providers: { lab: { type: "openai", baseUrl: oai.baseUrl, apiKeyEnv: "LAB_KEY" } } });

  it("chat -m refuses with the variable's name on stderr, exit 2, and sends nothing", async () => {
    home = labHome();
    const r = await runHearth(["chat", "-m", "hi"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`Hearth needs an API key for the provider "lab" to talk to the model.\n  Run \`npx hearth setup\`: it asks for the key, checks it and keeps it in ${join(home, ".env")}\n  or set it in your shell:  export LAB_KEY=...\n`);
    expect(oai.requests).toHaveLength(0);
  });

  it("doctor says the key is missing, offline and online, and sends no made-up key", async () => {
    home = labHome();
    const r = await runHearth(["doctor", "--online"], isolatedEnv({ HEARTH_HOME: home }), { timeoutMs: 40_000 });
    expect(r.stdout).toContain(`✗ api key: no key for lab\n    fix: add LAB_KEY=… to ${join(home, ".env")} (or export it)\n`);
    expect(r.stdout).toContain(`✗ provider lab: no key: LAB_KEY is not set\n    fix: add LAB_KEY=… to ${join(home, ".env")} (or export it)\n`);
    expect(r.stdout).not.toContain("no key needed");
    expect(oai.requests).toHaveLength(0);
    expect(oai.modelListings).toHaveLength(0);
    expect(r.code).toBe(1);
  });

  it("a local server without apiKeyEnv still needs no key, and chat -m prints no web-search warning", async () => {
    home = makeHome({ model: { name: "lab/qwen3" }, providers: { lab: { type: "openai", baseUrl: oai.baseUrl } } });
    oai.enqueue({ type: "completion", text: "Hello from the lab." });
    const r = await runHearth(["chat", "-m", "hi"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r).toEqual({ code: 0, stdout: "Hello from the lab.\n", stderr: "" });
    expect(oai.requests[0]!.headers.authorization).toBeUndefined();
  });
});

describe("doctor --online and ANTHROPIC_BASE_URL", () => {
  it("an address from ANTHROPIC_BASE_URL that ends in /v1 is named as the variable, with the hint to drop /v1", async () => {
    home = makeHome({});
    const r = await runHearth(["doctor", "--online"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: `${anth.url}/v1` }), { timeoutMs: 40_000 });
    const lines = r.stdout.split("\n");
    const i = lines.findIndex((l) => l.startsWith("✗ provider anthropic:"));
    expect(lines[i]).toMatch(/^✗ provider anthropic: reachable at .*\/v1, but listing models failed \(HTTP 404\)$/);
    expect(lines[i + 1]).toBe("    fix: ANTHROPIC_BASE_URL ends with /v1, which Hearth adds itself (…/v1/messages): set it to the address without /v1");
    expect(r.stdout).not.toContain("baseUrl");
  });

  it("a wrong Anthropic address never gets the hint to add /v1", async () => {
    home = makeHome({});
    const r = await runHearth(["doctor", "--online"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: `${anth.url}/elsewhere` }), { timeoutMs: 40_000 });
    const lines = r.stdout.split("\n");
    const i = lines.findIndex((l) => l.startsWith("✗ provider anthropic:"));
    expect(lines[i + 1]).toBe("    fix: check ANTHROPIC_BASE_URL: it is the address before /v1/messages (without /v1)");
  });
});

describe("exit codes and hints", () => {
  it("doctor exits 2 on an invalid config, like start", async () => {
    home = makeHome({});
    writeFileSync(join(home, "config.json"), '{ "agent": { "maxTurns": "lots" } }');
    const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-x" }));
    expect(r.stdout).toContain("✗ config:");
    expect(r.code).toBe(2);
  });

  it("a mistyped command gets a suggestion and exit 2; a word far from every command gets none", async () => {
    home = makeHome({});
    const r = await runHearth(["stauts"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")[0]).toBe('hearth: Unknown command "stauts"; did you mean "status"?');
    const far = await runHearth(["frobnicate"], isolatedEnv({ HEARTH_HOME: home }));
    expect(far.stderr.split("\n")[0]).toBe('hearth: Unknown command "frobnicate".');
  });

  it("skills and mcp hints name the command as the user runs it", async () => {
    home = makeHome({});
    const skills = await runHearth(["skills"], isolatedEnv({ HEARTH_HOME: home }));
    expect(skills.stdout).toContain("Add one with `npx hearth skills add PATH|GIT_URL`");
    const mcp = await runHearth(["mcp", "tools", "nope"], isolatedEnv({ HEARTH_HOME: home }));
    expect(mcp.code).toBe(2);
    expect(mcp.stdout).toBe("");
    expect(mcp.stderr.split("\n")[0]).toBe('hearth: No MCP server "nope" is configured. `npx hearth mcp` lists them.');
  });

  it("init does not ask for ANTHROPIC_API_KEY when it is set, and does when it is not", async () => {
    home = join(tmpdir(), `hearth-init-${process.pid}-${Date.now()}`);
    const withKey = await runHearth(["init"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-x" }));
    expect(withKey.code).toBe(0);
    expect(withKey.stdout).toContain('\nNext: try npx hearth chat -m "hello"\n');
    rmSync(home, { recursive: true, force: true });
    const without = await runHearth(["init"], isolatedEnv({ HEARTH_HOME: home }));
    expect(without.stdout).toContain('\nNext: set ANTHROPIC_API_KEY, then try: npx hearth chat -m "hello"\n');
  });

  it("start with no key on a fresh home names no config.json that does not exist, and says how to create one", async () => {
    home = join(tmpdir(), `hearth-fresh-${process.pid}-${Date.now()}`);
    const r = await runHearth(["start"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    if (!existsSync(join(home, "config.json"))) {
      expect(r.stderr).not.toContain("config.json:");
      expect(r.stderr).toContain("npx hearth init");
    } else {
      expect(readFileSync(join(home, "config.json"), "utf8")).toContain("apiKey");
    }
  });
});
