// The schema's secret marks are the one list: every marked field is found by walking the schema,
// and loading a config registers each marked value with the log redactor.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config.ts";
import { configSchema } from "../../src/config/schema.ts";
import { redact } from "../../src/process/log.ts";
import { ANY, secretFields } from "../../src/fields/secret-fields.ts";

describe("the secret marks of the config schema", () => {
  it("name every secret field, the MCP servers' auth secrets included", () => {
    expect(secretFields(configSchema).map((f) => `${f.path.join(".")} (${f.mark.secret})`)).toEqual([
      "model.apiKey (value)",
      "providers.*.apiKey (value)",
      "providers.*.headers (map)",
      "tools.web.search.apiKey (value)",
      "mcp.servers.*.env (map)",
      "mcp.servers.*.headers (map)",
      "mcp.servers.*.auth.clientSecret (value)",
      "mcp.servers.*.auth.privateKeyJwt.privateKey (value)",
      "channels.telegram.token (value)",
      "channels.discord.token (value)",
      "channels.slack.token (value)",
      "channels.slack.appToken (value)",
      "channels.matrix.accessToken (value)",
      "channels.email.password (value)",
      "memory.embeddings.apiKey (value)",
      "media.transcription.apiKey (value)",
      "voice.tts.apiKey (value)",
    ]);
  });

  it("every marked value in a loaded config is redacted from logs (of a map, the entries whose key names a credential)", () => {
    const raw: Record<string, unknown> = {};
    const secrets: string[] = [];
    secretFields(configSchema).forEach((field, i) => {
      const path = field.path.map((s) => (s === ANY ? `name${i}` : s));
      let node = raw;
      for (const step of path.slice(0, -1)) node = (node[step] ??= {}) as Record<string, unknown>;
      const value = `log-secret-${i}-${"y".repeat(10)}`;
      secrets.push(value);
      node[path.at(-1)!] = field.mark.secret === "map" ? { "X-Auth-Token": value, "Content-Type": "application/json-for-log-test" } : value;
    });
    try {
      parseConfig(raw, { home: "/nonexistent-home", env: {} });
    } catch {
      // Every marked field at once is not a valid config; the values are registered before validation.
    }
    for (const s of secrets) expect(redact(`the value ${s} here`)).toBe("the value [redacted] here");
    expect(redact("application/json-for-log-test")).toBe("application/json-for-log-test");
  });
});
