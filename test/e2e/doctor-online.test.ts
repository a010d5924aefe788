// `hearth doctor --online` against local fakes only: one line per provider.
import { rmSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { makeHome } from "../support/daemon.ts";
import { startFakeModel, toolCall, type FakeModel } from "../support/fake-model.ts";
import { calls, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { freePort } from "../support/telegram-emulator.ts";

let local: FakeOpenAI;
let hosted: FakeOpenAI;
let anth: FakeModel;
let home: string;
beforeEach(async () => {
  local = await startFakeOpenAI({ models: ["llama3.2", "gemma"], noToolModels: ["gemma"] });
  hosted = await startFakeOpenAI({ models: ["llama-3.3-70b"], apiKey: "right-key" });
  anth = await startFakeModel();
});
afterEach(async () => {
  await Promise.all([local.close(), hosted.close(), anth.close()]);
  rmSync(home, { recursive: true, force: true });
});

describe("hearth doctor --online", () => {
  it("reports each provider in one line: reachable, key accepted, model listed, tool calling", async () => {
    const down = await freePort();
    home = makeHome({
      model: { name: "ollama/llama3.2", fallbacks: ["claude-haiku-5", "groq/llama-3.3-70b", "lmstudio/qwen", "small/gemma"] },
      providers: {
        ollama: { baseUrl: local.baseUrl },
        small: { type: "openai", baseUrl: local.baseUrl },
        groq: { baseUrl: hosted.baseUrl, apiKey: "wrong-key" },
        lmstudio: { baseUrl: `http://127.0.0.1:${down}/v1` },
      },
    });
    local.enqueue(calls({ name: "ping", arguments: {} }));
    anth.enqueue(toolCall("ping", {}));
    const r = await runHearth(["doctor", "--online"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "ant-key", ANTHROPIC_BASE_URL: anth.url }), { timeoutMs: 40_000 });
    const lines = r.stdout.split("\n");
    const at = (name: string) => lines.slice(lines.findIndex((l) => l.slice(2).startsWith(`provider ${name}:`))).slice(0, 2);
    expect(at("ollama")[0]).toBe(`✓ provider ollama: reachable at ${local.baseUrl}, no key needed, model llama3.2 listed, tool calling works`);
    expect(at("anthropic")[0]).toBe(`✓ provider anthropic: reachable at ${anth.url}, key accepted, model claude-haiku-5 listed, tool calling works`);
    expect(at("groq")).toEqual([`✗ provider groq: reachable at ${hosted.baseUrl}, but the key was refused (HTTP 401)`, "    fix: set a valid key in GROQ_API_KEY or providers.groq.apiKey"]);
    expect(at("lmstudio")[0]).toMatch(new RegExp(`^✗ provider lmstudio: not reachable at http://127\\.0\\.0\\.1:${down}/v1 \\(.*ECONNREFUSED.*\\)$`));
    expect(at("lmstudio")[1]).toBe("    fix: start the lmstudio server, or set providers.lmstudio.baseUrl to where it runs");
    expect(at("small")).toEqual([
      `! provider small: reachable at ${local.baseUrl}, no key needed, model gemma listed, but tool calling failed (HTTP 400): registry.ollama.ai/library/gemma:latest does not support tools`,
      '    fix: Hearth runs it without tools; say so with "tools": false under providers.small.models.gemma, or pick a model that supports tools',
    ]);
    expect(r.code).toBe(1);
    // Two requests per reachable provider at most: the model list and one tiny tool request.
    expect(local.requests.map((q) => q.body.model)).toEqual(["llama3.2", "gemma"]);
    expect(local.requests[0]!.body.tools).toEqual([{ type: "function", function: { name: "ping", description: "Answers pong. Call it when asked to.", parameters: { type: "object", properties: {} } } }]);
    expect(anth.requests).toHaveLength(1);
    expect(hosted.requests).toHaveLength(0);
    expect(r.stdout).not.toContain("wrong-key");
  });

  it("without --online, contacts no provider", async () => {
    home = makeHome({ model: { name: "ollama/llama3.2" }, providers: { ollama: { baseUrl: local.baseUrl } } });
    const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.stdout).not.toContain("provider ollama");
    expect(r.stdout).toContain("✓ api key: not needed for Anthropic; providers in use: ollama\n");
    expect(local.requests).toHaveLength(0);
    expect(local.modelListings).toHaveLength(0);
  });
});

describe("hearth doctor (offline) and provider keys", () => {
  it("fails a config.json that holds a provider key and that other users can read", async () => {
    const { chmodSync } = await import("node:fs");
    const { join } = await import("node:path");
    home = makeHome({ model: { name: "groq/llama-3.3-70b-versatile" }, providers: { groq: { apiKey: "gsk-doctor-secret-1" } } });
    const file = join(home, "config.json");
    chmodSync(file, 0o644);
    const r = await runHearth(["doctor"], isolatedEnv({ HEARTH_HOME: home }));
    expect(r.stdout).toContain(`✗ config file: ${file} holds a secret and is readable by other users (mode 644)\n    fix: chmod 600 ${file}\n`);
    expect(r.stdout).toContain("✓ api key: not needed for Anthropic; providers in use: groq\n");
    expect(r.stdout).not.toContain("gsk-doctor-secret-1");
  });
});
