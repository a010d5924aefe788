import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { ConfigError, egressRules, loadConfig, parseConfig } from "../../src/config/config.ts";
import { isOwnDestination } from "../../src/egress/policy.ts";
import type { Config } from "../../src/config/schema.ts";
import { parseDuration, systemTimeZone } from "../../src/fields/config-fields.ts";
import { expandHome, homePaths, resolveHome } from "../../src/config/home.ts";
import { redact } from "../../src/process/log.ts";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), "hearth-config-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function load(text: string | null, env: Record<string, string> = {}): Promise<Config> {
  if (text !== null) await writeFile(path.join(home, "config.json"), text);
  return loadConfig({ home, env });
}

async function loadError(text: string, env: Record<string, string> = {}): Promise<ConfigError> {
  const err = await load(text, env).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describe("loadConfig", () => {
  it("gives every default when there is no config file", async () => {
    const config = await load(null);
    expect(config).toEqual({
      version: 3,
      workspace: path.join(home, "workspace"),
      timezone: systemTimeZone(),
      model: { name: "claude-sonnet-5-5", fallbacks: [], maxTokens: 8192, contextWindow: 200000, idleTimeoutMs: 60000 },
      // The bare model name is Anthropic's: its provider entry is filled in, with no key in this environment.
      providers: { anthropic: { type: "anthropic", models: {} } },
      agent: { maxTurns: 25, maxConcurrentRuns: 4, queueMode: "steer", shutdownGraceMs: 10000, releaseIdleAfter: "30m", maxSessionsInMemory: 500 },
      tools: {
        exec: { timeoutMs: 120000, sandbox: "auto", network: true, hosts: {} },
        shared: { allow: [] },
        web: {
          search: { enabled: true, mode: "server", provider: "brave", maxUses: 5, allowedDomains: [], blockedDomains: [] },
          fetch: { enabled: true, mode: "server", maxUses: 10, allowedDomains: [], blockedDomains: [], allowPrivate: [], timeoutMs: 20000, maxBytes: 5000000, maxChars: 100000 },
        },
      },
      mcp: { servers: {} },
      channels: {},
      heartbeat: { every: "30m", activeHours: { start: "08:00", end: "22:00" }, maxTokens: 1024, pauseAfterIdle: "7d", tools: [] },
      cron: {},
      tasks: { maxConcurrent: 3, maxMinutes: 30, maxCostUsd: 1, maxDepth: 1 },
      log: { level: "info" },
      budget: { hardStop: false, shared: {} },
      approvals: { exec: "risky", timeoutSeconds: 300, grantMinutes: 30, ask: [], allow: [] },
      egress: { allow: [], deny: [], allowPrivate: [], ask: "tainted", own: [] },
      pricing: {},
      compaction: {},
      media: { maxBytes: 20 * 1024 * 1024, keepTurns: 3 },
      dashboard: { enabled: false, host: "127.0.0.1", port: 7420, allowRemote: false },
      voice: { reply: "auto" },
      memory: {},
    });
  });

  it("reads budgets, prices and rate limits, and refuses a negative budget or price by its key path", async () => {
    const config = await load(`{
      "budget": { "daily": 2.5, "monthly": 40, "hardStop": true, "shared": { "daily": 0.25 } },
      "pricing": { "claude-haiku-4-5": { "input": 1, "output": 5, "cacheWrite1h": 2 } },
      "compaction": { "model": "claude-haiku-4-5" },
      "channels": { "telegram": { "token": "t", "groups": { "rateLimit": { "perSender": 3 } }, "dmRateLimit": { "perSender": 0 } } }
    }`);
    expect(config.budget).toEqual({ daily: 2.5, monthly: 40, hardStop: true, shared: { daily: 0.25 } });
    expect(config.pricing).toEqual({ "claude-haiku-4-5": { input: 1, output: 5, cacheWrite1h: 2 } });
    expect(config.compaction).toEqual({ model: "claude-haiku-4-5" });
    expect(config.channels.telegram!.groups.rateLimit).toEqual({ perSender: 3, perChat: 30, window: "1h" });
    expect(config.channels.telegram!.dmRateLimit).toEqual({ perSender: 0, window: "1h" });
    expect((await loadError(`{ "budget": { "daily": -1 } }`)).issues).toContain("budget.daily");
    expect((await loadError(`{ "pricing": { "x": { "input": -1, "output": 1 } } }`)).issues).toContain("pricing.x.input");
  });

  it("treats an empty or comment-only file as all defaults", async () => {
    expect((await load("// nothing yet\n")).agent.maxTurns).toBe(25);
    expect((await load("")).agent.maxTurns).toBe(25);
  });

  it("accepts comments and trailing commas", async () => {
    const config = await load(`// my config
      {
        /* block */ "agent": { "maxTurns": 30, }, // line comment
        "model": { "fallbacks": ["claude-haiku-5",], },
      }`);
    expect(config.agent.maxTurns).toBe(30);
    expect(config.agent.maxConcurrentRuns).toBe(4);
    expect(config.model.fallbacks).toEqual(["claude-haiku-5"]);
  });

  it("fills the defaults of a channel section that gives only some keys", async () => {
    const config = await load(`{ "channels": { "discord": { "token": "discord-token-123" } } }`);
    expect(config.channels.telegram).toBeUndefined();
    expect(config.channels.discord).toEqual({
      token: "discord-token-123",
      apiBase: "https://discord.com/api",
      ownerIds: [],
      dmPolicy: "pairing",
      maxPendingPairings: 3,
      allowFrom: [],
      guilds: { policy: "allowlist", allow: [], requireMention: true, rateLimit: { perSender: 10, perChat: 30, window: "1h" }, tasks: [] },
      dmRateLimit: { perSender: 30, window: "1h" },
      namePattern: null,
      queueMode: null,
    });
  });

  it("resolves the workspace against the home and expands ~", async () => {
    expect((await load(`{ "workspace": "notes" }`)).workspace).toBe(path.join(home, "notes"));
    expect((await load(`{ "workspace": "~/ws" }`, { HOME: "/users/me" })).workspace).toBe("/users/me/ws");
    expect((await load(`{ "workspace": "/abs/ws" }`)).workspace).toBe("/abs/ws");
  });

  it("refuses a workspace that contains the home folder: its keys and transcripts would be workspace files", async () => {
    for (const workspace of [path.dirname(home), home, "..", "~"]) {
      const err = await loadError(JSON.stringify({ workspace }), { HOME: path.dirname(home) });
      expect(err.issues).toBe(`✖ the workspace ${path.resolve(home, workspace === "~" ? path.dirname(home) : workspace)} contains Hearth's home folder ${home}, which holds its keys and every chat's transcript; choose a folder inside the home (the default, "workspace") or beside it\n  → at workspace`);
    }
    expect((await load(`{ "workspace": "${path.join(path.dirname(home), "beside")}" }`)).workspace).toBe(path.join(path.dirname(home), "beside"));
  });

  it("names the key path of a wrong type and starts with the file path", async () => {
    const err = await loadError(`{ "agent": { "maxTurns": "many" } }`);
    expect(err.message.startsWith(path.join(home, "config.json"))).toBe(true);
    expect(err.path).toBe(path.join(home, "config.json"));
    expect(err.message).toContain("expected number");
    expect(err.message).toContain("→ at agent.maxTurns");
    expect(err.issues).toContain("agent.maxTurns");
  });

  it("rejects an unknown key with a did-you-mean hint", async () => {
    const err = await loadError(`{ "agent": { "maxturns": 10, "maxTurn": 3 }, "modle": {} }`);
    expect(err.message).toContain(`"maxturns" (did you mean "maxTurns"?)`);
    expect(err.message).toContain(`"maxTurn" (did you mean "maxTurns"?)`);
    expect(err.message).toContain(`"modle" (did you mean "model"?)`);
  });

  it("lists the known keys when an unknown key resembles none", async () => {
    const err = await loadError(`{ "heartbeat": { "banana": 1 } }`);
    expect(err.message).toContain(`"banana"`);
    expect(err.message).toContain("every, activeHours");
  });

  it("refuses maxTurns above the hard cap of 100", async () => {
    expect((await load(`{ "agent": { "maxTurns": 100 } }`)).agent.maxTurns).toBe(100);
    const err = await loadError(`{ "agent": { "maxTurns": 101 } }`);
    expect(err.message).toContain("100");
    expect(err.message).toContain("agent.maxTurns");
  });

  it("refuses a time zone that is not IANA and canonicalises a valid one", async () => {
    const err = await loadError(`{ "timezone": "Mars/Olympus_Mons" }`);
    expect(err.message).toContain("→ at timezone");
    expect(err.message).toContain("Mars/Olympus_Mons");
    expect((await load(`{ "timezone": "Europe/Berlin" }`)).timezone).toBe("Europe/Berlin");
    expect((await load(`{ "timezone": "utc" }`)).timezone).toBe("UTC");
  });

  it("refuses a name pattern that does not compile, and an empty one", async () => {
    const err = await loadError(`{ "channels": { "telegram": { "namePattern": "(hearth" } } }`);
    expect(err.message).toContain("→ at channels.telegram.namePattern");
    expect(err.message).toContain("regular expression");
    const empty = await loadError(`{ "channels": { "telegram": { "namePattern": "" } } }`);
    expect(empty.message).toContain("channels.telegram.namePattern");
    const ok = await load(`{ "channels": { "telegram": { "namePattern": "\\\\bhearth\\\\b" } } }`);
    expect(ok.channels.telegram?.namePattern).toBe("\\bhearth\\b");
  });

  it("normalises numeric ids to strings", async () => {
    const config = await load(`{ "channels": {
      "telegram": { "ownerIds": [123456789, "987"], "allowFrom": [42],
                    "groups": { "allow": [-1001234567890, "-100999"] } },
      "discord": { "ownerIds": ["123456789012345678"], "guilds": { "allow": [555] } } } }`);
    expect(config.channels.telegram?.ownerIds).toEqual(["123456789", "987"]);
    expect(config.channels.telegram?.allowFrom).toEqual(["42"]);
    expect(config.channels.telegram?.groups.allow).toEqual(["-1001234567890", "-100999"]);
    expect(config.channels.discord?.ownerIds).toEqual(["123456789012345678"]);
    expect(config.channels.discord?.guilds.allow).toEqual(["555"]);
  });

  it("refuses ids that are names, or numbers too large to be exact", async () => {
    const err = await loadError(`{ "channels": {
      "telegram": { "ownerIds": ["@alice"] },
      "discord": { "ownerIds": [123456789012345678901] } } }`);
    expect(err.message).toContain("→ at channels.telegram.ownerIds[0]");
    expect(err.message).toContain("→ at channels.discord.ownerIds[0]");
    expect(err.message).toContain("as strings");
  });

  it("validates heartbeat durations and clock times", async () => {
    const config = await load(`{ "heartbeat": { "every": "1h30m", "activeHours": { "start": "00:00", "end": "24:00" } } }`);
    expect(config.heartbeat).toEqual({ every: "1h30m", activeHours: { start: "00:00", end: "24:00" }, maxTokens: 1024, pauseAfterIdle: "7d", tools: [] });
    expect((await load(`{ "heartbeat": { "every": 0 } }`)).heartbeat.every).toBe("0");
    const err = await loadError(`{ "heartbeat": { "every": "soon", "activeHours": { "start": "8:00" }, "pauseAfterIdle": "a week", "maxTokens": 0, "model": "" } }`);
    expect(err.message).toContain("→ at heartbeat.every");
    expect(err.message).toContain("→ at heartbeat.activeHours.start");
    expect(err.message).toContain("→ at heartbeat.pauseAfterIdle");
    expect(err.message).toContain("→ at heartbeat.maxTokens");
    expect(err.message).toContain("→ at heartbeat.model");
  });

  it("lets environment secrets win over the file and creates channel sections", async () => {
    const config = await load(
      `{ "model": { "apiKey": "file-key-000000" }, "channels": { "telegram": { "token": "file-token-0000", "ownerIds": [1] } } }`,
      {
        ANTHROPIC_API_KEY: "env-key-1111111",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:8080/",
        TELEGRAM_BOT_TOKEN: "env-telegram-222",
        DISCORD_BOT_TOKEN: "env-discord-3333",
        HEARTH_LOG: "debug",
      },
    );
    expect(config.model.apiKey).toBe("env-key-1111111");
    expect(config.model.baseUrl).toBe("http://127.0.0.1:8080");
    expect(config.channels.telegram?.token).toBe("env-telegram-222");
    expect(config.channels.telegram?.ownerIds).toEqual(["1"]);
    expect(config.channels.discord?.token).toBe("env-discord-3333");
    expect(config.channels.discord?.dmPolicy).toBe("pairing");
    expect(config.log.level).toBe("debug");
    // Every secret is known to the log redactor.
    expect(redact("k=env-key-1111111 t=env-telegram-222 d=env-discord-3333")).toBe("k=[redacted] t=[redacted] d=[redacted]");
  });

  it("ignores empty environment variables and an invalid HEARTH_LOG", async () => {
    const config = await load(null, { TELEGRAM_BOT_TOKEN: "  ", HEARTH_LOG: "loud" });
    expect(config.channels.telegram).toBeUndefined();
    expect(config.log.level).toBe("info");
  });

  it("says which environment variable a bad value came from", async () => {
    const err = await loadError("{}", { ANTHROPIC_BASE_URL: "not a url" });
    expect(err.message).toContain("→ at model.baseUrl");
    expect(err.message).toContain("ANTHROPIC_BASE_URL");
  });

  it("names the line and column of a JSON syntax error", async () => {
    const err = await loadError(`{\n  "agent": {\n    "maxTurns": 30\n    "queueMode": "steer"\n  }\n}`);
    expect(err.message.startsWith(path.join(home, "config.json"))).toBe(true);
    expect(err.message).toContain("line 4, column 5");
    expect(err.message).toContain("comma expected");
  });

  it("never echoes a bad token value in the error", async () => {
    const badString = await loadError(`{ "channels": { "telegram": { "token": "123456:SUPERSECRET tail" } } }`);
    expect(badString.message).toContain("→ at channels.telegram.token");
    expect(badString.message).not.toContain("SUPERSECRET");
    const badType = await loadError(`{ "model": { "apiKey": 98765432123456 } }`);
    expect(badType.message).toContain("→ at model.apiKey");
    expect(badType.message).not.toContain("98765432123456");
    const syntax = await loadError(`{ "channels": { "discord": { "token": "MYSECRETTOKEN-abc } } }`);
    expect(syntax.message).toContain("line 1");
    expect(syntax.message).not.toContain("MYSECRETTOKEN");
    const fromEnv = await loadError("{}", { DISCORD_BOT_TOKEN: "ENVSECRET with space" });
    expect(fromEnv.message).toContain("DISCORD_BOT_TOKEN");
    expect(fromEnv.message).not.toContain("ENVSECRET");
  });

  it("refuses a config file that is not an object", async () => {
    const err = await loadError(`[1, 2]`);
    expect(err.message).toContain("expected object");
  });
});

describe("parseDuration", () => {
  it("reads compound durations and refuses anything else", () => {
    expect(parseDuration("30m")).toBe(1_800_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("0")).toBe(0);
    expect(parseDuration("-5m")).toBeNull();
    expect(parseDuration("1.5h")).toBeNull();
    expect(parseDuration("soon")).toBeNull();
  });
});

describe("home folder", () => {
  it("uses HEARTH_HOME, expanding ~, else ~/.hearth", () => {
    expect(resolveHome({ HEARTH_HOME: "/srv/hearth" })).toBe("/srv/hearth");
    expect(resolveHome({ HEARTH_HOME: "~/bots/h", HOME: "/users/me" })).toBe("/users/me/bots/h");
    expect(resolveHome({ HOME: "/users/me" })).toBe("/users/me/.hearth");
    expect(resolveHome({ HEARTH_HOME: "", HOME: "/users/me" })).toBe("/users/me/.hearth");
    expect(resolveHome({ HEARTH_HOME: "rel/h", HOME: "/users/me" })).toBe(path.resolve("rel/h"));
  });

  it("expands only a leading ~", () => {
    expect(expandHome("~", { HOME: "/users/me" })).toBe("/users/me");
    expect(expandHome("~/x", { HOME: "/users/me" })).toBe("/users/me/x");
    expect(expandHome("a/~/x", { HOME: "/users/me" })).toBe("a/~/x");
    expect(expandHome("~bob/x", { HOME: "/users/me" })).toBe("~bob/x");
  });

  it("lays out every path of the home in one place", () => {
    const p = homePaths("/h");
    expect(p).toMatchObject({
      home: "/h",
      config: "/h/config.json",
      workspace: "/h/workspace",
      sessions: "/h/sessions",
      sessionsIndex: "/h/sessions/index.json",
      inbox: "/h/inbox.jsonl",
      cron: "/h/cron",
      jobs: "/h/cron/jobs.json",
      runs: "/h/cron/runs.jsonl",
      pairing: "/h/pairing.json",
      index: "/h/index",
      memoryDb: "/h/index/memory.db",
      socket: "/h/gateway.sock",
      lock: "/h/gateway.lock",
    });
  });

  it("keeps session file names readable and inside the sessions folder", () => {
    const p = homePaths("/h");
    expect(p.sessionFile("main")).toBe("/h/sessions/main.jsonl");
    expect(p.sessionFile("group:telegram:-100123:7")).toBe("/h/sessions/group:telegram:-100123:7.jsonl");
    expect(p.sessionFile("../../etc/passwd")).toBe("/h/sessions/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.jsonl");
    expect(p.sessionFile("a/b")).not.toBe(p.sessionFile("a%2Fb"));
  });
});

describe("media config", () => {
  it("takes a transcription service and refuses one without a model", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "hearth-media-config-"));
    try {
      const ok = parseConfig({ media: { transcription: { baseUrl: "https://api.groq.com/openai/v1/", model: "whisper-large-v3" } } }, { home, env: {} });
      expect(ok.media.transcription).toEqual({ baseUrl: "https://api.groq.com/openai/v1", model: "whisper-large-v3", showHeard: true });
      expect(() => parseConfig({ media: { transcription: { baseUrl: "https://x.test/v1" } } }, { home, env: {} })).toThrow(/media\.transcription\.model/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("egress rules", () => {
  it("the owner's own destinations are egress.own and every SSH exec host's address and port", () => {
    const config = parseConfig(
      { egress: { own: ["git.example.com:443"] }, tools: { exec: { hosts: { nas: { type: "ssh", host: "nas.lan", user: "me" }, box: { type: "ssh", host: "::1", port: 2222, user: "me" } } } } },
      { home, env: {} },
    );
    const rules = egressRules(config);
    expect(rules.own).toEqual(["git.example.com:443", "nas.lan:22", "[::1]:2222"]);
    expect(isOwnDestination(rules, { host: "NAS.lan", port: 22 })).toBe(true);
    expect(isOwnDestination(rules, { host: "nas.lan", port: 80 })).toBe(false);
    expect(isOwnDestination(rules, { host: "::1", port: 2222 })).toBe(true);
    expect(isOwnDestination(rules, { host: "git.example.com", port: 443 })).toBe(true);
    expect(egressRules(parseConfig({}, { home, env: {} })).own).toEqual([]);
  });
});

describe("dashboard config", () => {
  it("is off by default, on loopback port 7420; any other address needs allowRemote", () => {
    expect(parseConfig({}, { home, env: {} }).dashboard).toEqual({ enabled: false, host: "127.0.0.1", port: 7420, allowRemote: false });
    expect(parseConfig({ dashboard: { enabled: true, host: "::1", port: 0 } }, { home, env: {} }).dashboard.port).toBe(0);
    expect(() => parseConfig({ dashboard: { enabled: true, host: "0.0.0.0" } }, { home, env: {} })).toThrow(
      '"0.0.0.0" is not a loopback address; set dashboard.allowRemote to true to serve the dashboard beyond this machine\n  → at dashboard.host',
    );
    expect(parseConfig({ dashboard: { host: "0.0.0.0", allowRemote: true } }, { home, env: {} }).dashboard.host).toBe("0.0.0.0");
  });
});
