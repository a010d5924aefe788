import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfig } from "../../src/config/config.ts";
import { CONFIG_VERSION, migrateConfigFile, NewerConfigError } from "../../src/config/migrations.ts";
import { readSecrets } from "../../src/config/secrets.ts";
import { createLogger } from "../../src/process/log.ts";

const fixtures = path.join(import.meta.dirname, "fixtures", "config-versions");
const fixtureNames = readdirSync(fixtures).filter((n) => n.endsWith(".jsonc")).sort();

let home: string;
let lines: string[];
const log = () => createLogger({ level: "debug", sink: { write: (l: string) => void lines.push(l) } });
beforeEach(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "hearth-migrate-"));
  lines = [];
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** What the fixture meant, read the way the Hearth of its version read it (secrets in the file). */
function meant(text: string) {
  const raw = parseJsonc(text, [], { allowTrailingComma: true }) as Record<string, unknown>;
  delete raw.version;
  return parseConfig(raw, { home, env: {} });
}

function withoutKeyEnvs(config: ReturnType<typeof loadConfig>) {
  for (const p of Object.values(config.providers)) delete p.apiKeyEnv;
  // The old key is read into egress.allowPrivate (the one list in force) whichever place holds it.
  config.tools.web.fetch.allowPrivate = [];
  return config;
}

describe("config.json migrations", () => {
  it("has a fixture for every past version", () => {
    const versions = new Set(fixtureNames.map((n) => Number(/^v(\d+)-/.exec(n)![1])));
    for (let v = 0; v <= CONFIG_VERSION; v++) expect(versions.has(v), `a fixture of version ${v}`).toBe(true);
  });

  for (const name of fixtureNames) {
    it(`migrates ${name} to version ${CONFIG_VERSION} in place, meaning the same, secrets moved to a 0600 .env, the old file kept`, () => {
      const original = readFileSync(path.join(fixtures, name), "utf8");
      copyFileSync(path.join(fixtures, name), path.join(home, "config.json"));
      const expected = meant(original);
      const plan = migrateConfigFile(home, log());
      const text = readFileSync(path.join(home, "config.json"), "utf8");
      expect((parseJsonc(text) as { version: number }).version).toBe(CONFIG_VERSION);
      // (A provider without a preset variable is told where its key went: apiKeyEnv.)
      expect(withoutKeyEnvs(loadConfig({ home, env: {} }))).toEqual(withoutKeyEnvs({ ...expected, version: CONFIG_VERSION }));
      // Every comment of the original that is not on a removed secret's line is still there.
      const comments = original.split("\n").filter((l) => l.trim().startsWith("//")).map((l) => l.trim());
      for (const c of comments) expect(text).toContain(c);
      if (plan.from === CONFIG_VERSION) {
        expect(plan.steps).toEqual([]);
        expect(text).toBe(original);
        expect(readdirSync(home).sort()).toEqual(["config.json"]);
        return;
      }
      expect(readFileSync(path.join(home, `config.json.v${plan.from}.bak`), "utf8")).toBe(original);
      const secrets = Object.values(readSecrets(home));
      for (const s of secrets) expect(text).not.toContain(s);
      if (secrets.length > 0) expect(statSync(path.join(home, ".env")).mode & 0o777).toBe(0o600);
      // One log line per step, naming the versions and never a secret.
      const logged = lines.filter((l) => l.includes("config.migrated"));
      expect(logged.map((l) => [JSON.parse(l).from, JSON.parse(l).to])).toEqual(plan.steps.map((s) => [s.from, s.to]));
      for (const s of secrets) expect(lines.join("")).not.toContain(s);
    });
  }

  it("moves each secret to its variable", () => {
    copyFileSync(path.join(fixtures, "v1-providers.jsonc"), path.join(home, "config.json"));
    migrateConfigFile(home, log());
    expect(readSecrets(home)).toEqual({
      LAB_API_KEY: "lab-fixture-key-1111",
      OPENROUTER_API_KEY: "sk-or-fixture-2222",
      DISCORD_BOT_TOKEN: "MTAfixtureDiscordTokenPartOne000.Gabcde.fixtureDiscordTokenPartThree00",
      BRAVE_API_KEY: "brave-fixture-3333",
    });
    const raw = parseJsonc(readFileSync(path.join(home, "config.json"), "utf8")) as { providers: { lab: { apiKeyEnv: string } } };
    expect(raw.providers.lab.apiKeyEnv).toBe("LAB_API_KEY");
  });

  it("moves the MCP servers' auth secrets of a config from before versions to .env, leaving ${VAR} references the auth expands", () => {
    const pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIFixtureFixtureFixtureFixtureFixture00\n-----END PRIVATE KEY-----\n";
    const text = JSON.stringify({
      mcp: {
        servers: {
          notes: { url: "https://notes.example/mcp", auth: { type: "oauth", clientId: "hearth", clientSecret: "notes-client-secret-1" } },
          "ci-bot": { url: "https://ci.example/mcp", auth: { type: "client_credentials", clientId: "hearth", privateKeyJwt: { privateKey: pem } } },
          build: { url: "https://build.example/mcp", auth: { type: "client_credentials", clientId: "hearth", clientSecret: "${BUILD_SECRET}" } },
        },
      },
    }, null, 2);
    writeFileSync(path.join(home, "config.json"), text, { mode: 0o600 });
    const plan = migrateConfigFile(home, log());
    expect(plan.steps.flatMap((s) => s.did)).toEqual([
      'added "version": 1',
      "moved mcp.servers.notes.auth.clientSecret to .env as HEARTH_MCP_NOTES_CLIENT_SECRET",
      "moved mcp.servers.ci-bot.auth.privateKeyJwt.privateKey to .env as HEARTH_MCP_CI_BOT_PRIVATE_KEY",
    ]);
    expect(readSecrets(home)).toEqual({ HEARTH_MCP_NOTES_CLIENT_SECRET: "notes-client-secret-1", HEARTH_MCP_CI_BOT_PRIVATE_KEY: pem.trim() });
    const migrated = readFileSync(path.join(home, "config.json"), "utf8");
    expect(migrated).not.toContain("notes-client-secret-1");
    expect(migrated).not.toContain("PRIVATE KEY");
    const servers = loadConfig({ home, env: {} }).mcp.servers;
    expect(servers.notes!.auth).toEqual({ type: "oauth", clientId: "hearth", clientSecret: "${HEARTH_MCP_NOTES_CLIENT_SECRET}" });
    expect(servers["ci-bot"]!.auth).toMatchObject({ privateKeyJwt: { privateKey: "${HEARTH_MCP_CI_BOT_PRIVATE_KEY}" } });
    // A reference already there stays as it is.
    expect(servers.build!.auth).toMatchObject({ clientSecret: "${BUILD_SECRET}" });
  });

  it("a second run changes nothing and keeps the first backup", () => {
    copyFileSync(path.join(fixtures, "v0-hand-written.jsonc"), path.join(home, "config.json"));
    chmodSync(path.join(home, "config.json"), 0o644);
    migrateConfigFile(home, log());
    const after = readFileSync(path.join(home, "config.json"), "utf8");
    expect(migrateConfigFile(home, log()).steps).toEqual([]);
    expect(readFileSync(path.join(home, "config.json"), "utf8")).toBe(after);
    expect(readdirSync(home).sort()).toEqual([".env", "config.json", "config.json.v0.bak"]);
    // The kept copy holds the keys that moved to .env: owner-only even from a world-readable file.
    expect(statSync(path.join(home, "config.json.v0.bak")).mode & 0o777).toBe(0o600);
  });

  it("keeps an older copy already there: the new one is numbered, and the plan names where it went", () => {
    writeFileSync(path.join(home, "config.json.v0.bak"), "an older copy\n", { mode: 0o600 });
    writeFileSync(path.join(home, "config.json"), `{ "model": { "apiKey": "sk-ant-numbered-0000" } }\n`, { mode: 0o600 });
    const first = migrateConfigFile(home, log());
    expect(first.keptAs).toBe("config.json.v0-2.bak");
    expect(readFileSync(path.join(home, "config.json.v0.bak"), "utf8")).toBe("an older copy\n");
    expect(readFileSync(path.join(home, "config.json.v0-2.bak"), "utf8")).toBe(`{ "model": { "apiKey": "sk-ant-numbered-0000" } }\n`);
    expect(lines.filter((l) => l.includes("config.migrated")).map((l) => JSON.parse(l).keptAs)).toEqual(Array(CONFIG_VERSION).fill(path.join(home, "config.json.v0-2.bak")));
    // A link where the copy would go is never written through: the next number is taken.
    writeFileSync(path.join(home, "config.json"), `{ "model": { "apiKey": "sk-ant-numbered-1111" } }\n`, { mode: 0o600 });
    const outside = path.join(home, "..", `outside-${path.basename(home)}`);
    writeFileSync(outside, "not Hearth's\n");
    symlinkSync(outside, path.join(home, "config.json.v0-3.bak"));
    try {
      expect(migrateConfigFile(home, log()).keptAs).toBe("config.json.v0-4.bak");
      expect(readFileSync(outside, "utf8")).toBe("not Hearth's\n");
    } finally {
      rmSync(outside);
    }
  });

  it("a config.json that is a symbolic link is migrated in memory only, never rewritten through the link", () => {
    const real = path.join(home, "real-config.jsonc");
    const text = `{ "model": { "apiKey": "sk-ant-linked-0000" } }\n`;
    writeFileSync(real, text, { mode: 0o600 });
    symlinkSync(real, path.join(home, "config.json"));
    const plan = migrateConfigFile(home, log());
    expect(plan.refused).toBe(`${path.join(home, "config.json")} is a symbolic link; it is read as version 0 and brought up to date in memory at every start, but never rewritten through the link (replace the link with the file to migrate it)`);
    expect(plan.keptAs).toBeNull();
    expect(readFileSync(real, "utf8")).toBe(text);
    expect(readdirSync(home).sort()).toEqual(["config.json", "real-config.jsonc"]);
    expect(loadConfig({ home, env: {} }).model.apiKey).toBe("sk-ant-linked-0000");
  });

  it("refuses a config from a newer Hearth with a sentence that says what to do, and changes nothing", () => {
    const text = `{ "version": ${CONFIG_VERSION + 1}, "model": { "name": "claude-sonnet-9" } }\n`;
    writeFileSync(path.join(home, "config.json"), text);
    const err = (() => {
      try {
        loadConfig({ home, env: {} });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(NewerConfigError);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `${path.join(home, "config.json")} is configuration version ${CONFIG_VERSION + 1}, written by a newer Hearth; this one reads versions up to ${CONFIG_VERSION}. ` +
        `Update Hearth (git pull && npm install), or restore the file this version wrote (config.json.v${CONFIG_VERSION}.bak, if an upgrade left one).`,
    );
    expect(() => migrateConfigFile(home, log())).toThrow(NewerConfigError);
    expect(readFileSync(path.join(home, "config.json"), "utf8")).toBe(text);
    expect(readdirSync(home)).toEqual(["config.json"]);
  });

  it("a version that is not a whole number is a configuration error", () => {
    writeFileSync(path.join(home, "config.json"), `{ "version": "2" }`);
    expect(() => loadConfig({ home, env: {} })).toThrow(/"version" must be a whole number/);
  });

  it("the real environment wins over the .env file, which wins over nothing", () => {
    writeFileSync(path.join(home, ".env"), "# keys\nexport ANTHROPIC_API_KEY='sk-ant-from-file'\nnot a line\n", { mode: 0o600 });
    expect(loadConfig({ home, env: {} }).model.apiKey).toBe("sk-ant-from-file");
    expect(loadConfig({ home, env: { ANTHROPIC_API_KEY: "sk-ant-from-shell" } }).model.apiKey).toBe("sk-ant-from-shell");
  });
});
