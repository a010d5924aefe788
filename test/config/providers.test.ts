import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";
import type { Config } from "../../src/config/schema.ts";
import { assertModelCredentials, MissingApiKeyError } from "../../src/config/credentials.ts";
import { hearthCmd } from "../../src/process/hearth-command.ts";
import { redact } from "../../src/process/log.ts";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), "hearth-providers-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function load(config: unknown, env: Record<string, string> = {}): Promise<Config> {
  await writeFile(path.join(home, "config.json"), JSON.stringify(config));
  return loadConfig({ home, env });
}

async function issues(config: unknown, env: Record<string, string> = {}): Promise<string> {
  const err = await load(config, env).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).issues;
}

describe("providers in config", () => {
  it("a preset needs no entry: ollama/llama3.2 gets Ollama's local address and no key", async () => {
    const c = await load({ model: { name: "ollama/llama3.2" } });
    expect(c.providers).toEqual({ ollama: { type: "openai", baseUrl: "http://127.0.0.1:11434/v1", models: {} } });
    expect(() => assertModelCredentials(c, home)).not.toThrow();
  });

  it("a bare model name stays Anthropic's, with model.apiKey and ANTHROPIC_BASE_URL", async () => {
    const c = await load({ model: { name: "claude-haiku-5", apiKey: "sk-ant-config-key-1" } }, { ANTHROPIC_BASE_URL: "http://127.0.0.1:9/" });
    expect(c.providers.anthropic).toEqual({ type: "anthropic", baseUrl: "http://127.0.0.1:9", apiKey: "sk-ant-config-key-1", models: {} });
  });

  it("hosted presets take their keys from OPENAI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, all redacted in logs", async () => {
    const env = { OPENAI_API_KEY: "sk-openai-secret-1", OPENROUTER_API_KEY: "sk-or-secret-2", GROQ_API_KEY: "gsk-secret-3" };
    const c = await load({ model: { name: "openrouter/meta-llama/llama-3.3-70b-instruct", fallbacks: ["groq/llama-3.3-70b-versatile"] } }, env);
    expect(c.providers.openrouter).toEqual({ type: "openai", baseUrl: "https://openrouter.ai/api/v1", apiKey: "sk-or-secret-2", models: {} });
    expect(c.providers.groq!.apiKey).toBe("gsk-secret-3");
    expect(c.providers.openai).toBeUndefined();
    expect(redact("a=sk-openai-secret-1 b=sk-or-secret-2 c=gsk-secret-3")).toBe("a=[redacted] b=[redacted] c=[redacted]");
  });

  it("a custom provider reads its key from the variable apiKeyEnv names, and keeps its models' limits", async () => {
    const c = await load(
      { model: { name: "lab/qwen3" }, providers: { lab: { type: "openai", baseUrl: "http://10.0.0.5:8080/v1/", apiKeyEnv: "LAB_KEY", headers: { "x-team": "a" }, models: { qwen3: { contextWindow: 32768, maxTokens: 4096, tools: false } } } } },
      { LAB_KEY: "lab-secret-key-9" },
    );
    expect(c.providers.lab).toEqual({ type: "openai", baseUrl: "http://10.0.0.5:8080/v1", apiKeyEnv: "LAB_KEY", apiKey: "lab-secret-key-9", headers: { "x-team": "a" }, models: { qwen3: { contextWindow: 32768, maxTokens: 4096, tools: false } } });
    expect(redact("lab-secret-key-9")).toBe("[redacted]");
  });

  it("header credentials are redacted in logs, other header values are not", async () => {
    await load({ providers: { gw: { type: "openai", baseUrl: "http://127.0.0.1:1/v1", headers: { Authorization: "Bearer gw-secret-token-77", "x-title": "Hearth at home" } } } });
    expect(redact("sent gw-secret-token-77 as Hearth at home")).toBe("sent [redacted] as Hearth at home");
  });

  it("names the key path of a model whose provider is unknown", async () => {
    expect(await issues({ model: { fallbacks: ["claude-haiku-5", "olama/llama3.2"] } })).toBe(
      '✖ unknown provider "olama" in "olama/llama3.2": add providers.olama or use one of anthropic, openai, openrouter, groq, ollama, lmstudio, vllm\n  → at model.fallbacks.1',
    );
  });

  it("names the missing type and base URL of a custom provider", async () => {
    expect(await issues({ providers: { mine: { baseUrl: "http://127.0.0.1:1/v1" } } })).toBe('✖ "mine" is not a preset provider: set "type" to "anthropic" or "openai"\n  → at providers.mine.type');
    expect(await issues({ providers: { mine: { type: "openai" } } })).toBe('✖ an OpenAI-compatible provider needs a baseUrl, e.g. "http://127.0.0.1:8080/v1"\n  → at providers.mine.baseUrl');
    expect(await issues({ providers: { ollama: { type: "gemini" } } })).toContain("providers.ollama.type");
    expect(await issues({ providers: { ollama: { models: { x: { tool: false } } } } })).toContain('Unknown key "tool" (did you mean "tools"?)');
  });

  it("a hosted provider without a key stops the start with the variable to set", async () => {
    const c = await load({ model: { name: "groq/llama-3.3-70b-versatile" } });
    expect(() => assertModelCredentials(c, home)).toThrow(MissingApiKeyError);
    expect(() => assertModelCredentials(c, home)).toThrow(/export GROQ_API_KEY=\.\.\./);
  });

  it("a new home without a key points to the setup wizard first", () => {
    const message = new MissingApiKeyError(home).message;
    expect(message.split("\n").slice(0, 3)).toEqual([
      "Hearth needs an Anthropic API key to talk to the model.",
      `  Run \`${hearthCmd("setup")}\`: it asks for the key, checks it and keeps it in ${path.join(home, ".env")}`,
      "  or set it in your shell:  export ANTHROPIC_API_KEY=sk-ant-...",
    ]);
  });
});
