import { existsSync, statSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../../src/config/config.ts";
import { homePaths } from "../../src/config/home.ts";
import { ensureHome, initHome } from "../../src/config/init.ts";
import { parse } from "jsonc-parser";
import { docsPages, settingsRows } from "../support/docs-settings.ts";

const templateFiles = ["AGENTS.md", "HEARTBEAT.md", "IDENTITY.md", "MEMORY.md", "SOUL.md", "USER.md", "memory/README.md"];
const repoWorkspace = path.resolve(import.meta.dirname, "../../workspace");

let root: string;
let home: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hearth-init-"));
  home = path.join(root, "home");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("initHome", () => {
  it("creates the home, a config, the data folders and the workspace", async () => {
    const { created, kept } = initHome(home);
    const p = homePaths(home);
    expect(kept).toEqual([]);
    for (const dir of [home, p.sessions, p.cron, p.index, p.workspace]) {
      expect(statSync(dir).isDirectory()).toBe(true);
      expect(created).toContain(dir);
    }
    expect(created).toContain(p.config);
    for (const file of templateFiles) {
      const dest = path.join(p.workspace, file);
      expect(await readFile(dest, "utf8")).toBe(await readFile(path.join(repoWorkspace, file), "utf8"));
      expect(created).toContain(dest);
    }
    // Private by default: the home and the config (which may hold tokens) are the owner's only.
    expect((await stat(home)).mode & 0o077).toBe(0);
    expect((await stat(p.config)).mode & 0o077).toBe(0);
  });

  it("keeps an edited config and an edited USER.md when run again", async () => {
    initHome(home);
    const p = homePaths(home);
    const userMd = path.join(p.workspace, "USER.md");
    await writeFile(p.config, `{ "agent": { "maxTurns": 7 } }`);
    await writeFile(userMd, "# Owner\n- Name: Ada\n");

    const again = initHome(home);
    expect(again.created).toEqual([]);
    expect(again.kept).toContain(p.config);
    expect(again.kept).toContain(userMd);
    expect(await readFile(p.config, "utf8")).toBe(`{ "agent": { "maxTurns": 7 } }`);
    expect(await readFile(userMd, "utf8")).toBe("# Owner\n- Name: Ada\n");
  });

  it("fills the workspace that an existing config names", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(home, { recursive: true });
    await writeFile(homePaths(home).config, `{ "workspace": "elsewhere" }`);
    initHome(home);
    expect(existsSync(path.join(home, "elsewhere", "SOUL.md"))).toBe(true);
    expect(existsSync(path.join(home, "workspace"))).toBe(false);
  });

  it("writes a config that validates to exactly the defaults", async () => {
    initHome(home);
    const fromTemplate = loadConfig({ home, env: {} });
    const defaults = parseConfig({}, { home, env: {} });
    expect(fromTemplate).toEqual(defaults);
  });

  it("writes every key the docs' settings tables name (commented examples count), each named on one page only", async () => {
    const table = docsPages().flatMap((page) => settingsRows(page).map((row) => ({ page, row })));
    const keys = table.flatMap(({ row }) => {
      const named = [...row.split("|")[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      // "`tools.web.fetch.timeoutMs`, `maxBytes`": a bare name is a sibling of the first key.
      const parent = named[0]!.split(".").slice(0, -1).join(".");
      return named.map((k) => (k.includes(".") || !parent ? k : `${parent}.${k}`));
    });
    expect(keys.length).toBeGreaterThan(150);
    const pageOf = new Map<string, string>();
    const twice = table.flatMap(({ page, row }) => {
      const key = /^\| `([^`]+)`/.exec(row)![1]!;
      const first = pageOf.get(key);
      pageOf.set(key, first ?? page);
      return first ? [`${key}: ${first} and ${page}`] : [];
    });
    expect(twice).toEqual([]);
    initHome(home);
    const text = await readFile(homePaths(home).config, "utf8");
    const uncommented = text.split("\n").map((line) => line.replace(/^(\s*)\/\/ (?=\s*["}])/, "$1")).join("\n");
    const raw = parse(uncommented, [], { allowTrailingComma: true }) as unknown;
    const has = (node: unknown, parts: string[]): boolean => {
      if (parts.length === 0) return true;
      if (node === null || typeof node !== "object") return false;
      const [p, ...rest] = parts as [string, ...string[]];
      if (p === "*" || p.startsWith("<")) return Object.values(node).some((v) => has(v, rest));
      return p in node && has((node as Record<string, unknown>)[p], rest);
    };
    expect(keys.filter((k) => !has(raw, k.split(".")))).toEqual([]);
  });

  it("writes channel examples that validate once uncommented and filled in", async () => {
    initHome(home);
    const text = await readFile(homePaths(home).config, "utf8");
    // Uncomment the example lines (those whose text starts with a key or a closing brace).
    const uncommented = text
      .split("\n")
      .map((line) => line.replace(/^(\s*)\/\/ (?=\s*["}])/, "$1"))
      .join("\n")
      // An address's placeholder ("<…, e.g. you@example.org>") becomes an address, every other one an id.
      .replace(/"<[^">]*>"/g, (p) => (p.includes("@") ? '"ann@example.org"' : '"123456789"'));
    const errors: unknown[] = [];
    const raw = parse(uncommented, errors as never, { allowTrailingComma: true }) as Record<string, unknown>;
    expect(errors).toEqual([]);
    // Platforms whose ids are not numbers get ids of their own shape in place of the numeric stand-in.
    const shaped: Record<string, string> = { slack: "U0123ABCD", signal: "+4915112345678", whatsapp: "+4915112345678", matrix: "@ann:example.org" };
    const reshape = (v: unknown, id: string): unknown =>
      v === "123456789" || v === "ann@example.org" ? id : Array.isArray(v) ? v.map((x) => reshape(x, id)) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reshape(x, id)])) : v;
    const channels = raw.channels as Record<string, unknown>;
    for (const [platform, id] of Object.entries(shaped)) if (channels[platform]) channels[platform] = reshape(channels[platform], id);
    const config = parseConfig(raw, { home, env: {} });
    expect(config.channels.telegram?.ownerIds).toEqual(["123456789"]);
    expect(config.channels.telegram?.dmPolicy).toBe("pairing");
    expect(config.channels.discord?.guilds.allow).toEqual(["123456789"]);
    expect(config.channels.email).toMatchObject({ address: "ann@example.org", ownerAddresses: ["ann@example.org"], dmPolicy: "disabled" });
    expect(config.model.apiKey).toBe("123456789");
    expect(config.media.transcription).toMatchObject({ baseUrl: "https://api.openai.com/v1", model: "gpt-4o-transcribe", showHeard: true });
    expect(config.voice).toEqual({ tts: { baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY", model: "gpt-4o-mini-tts", voice: "alloy", format: "opus", pricing: { perMillionCharsUsd: 15 } }, reply: "auto" });
    expect(config.providers.lab).toMatchObject({ type: "openai", baseUrl: "http://10.0.0.5:8080/v1", models: { qwen3: { contextWindow: 32768, maxTokens: 4096, tools: true } } });
  });
});

describe("ensureHome", () => {
  it("restores a deleted template file but leaves an existing one alone", async () => {
    initHome(home);
    const p = homePaths(home);
    const heartbeat = path.join(p.workspace, "HEARTBEAT.md");
    const soul = path.join(p.workspace, "SOUL.md");
    await rm(heartbeat);
    await rm(path.join(p.workspace, "memory"), { recursive: true });
    await writeFile(soul, "# My own soul\n");

    const created = ensureHome(home);
    expect(created).toContain(heartbeat);
    expect(created).toContain(path.join(p.workspace, "memory", "README.md"));
    expect(created).not.toContain(soul);
    expect(await readFile(heartbeat, "utf8")).toBe(await readFile(path.join(repoWorkspace, "HEARTBEAT.md"), "utf8"));
    expect(await readFile(soul, "utf8")).toBe("# My own soul\n");
    expect(ensureHome(home)).toEqual([]);
  });

  it("creates the folders of a fresh home and a configured workspace, without a config", async () => {
    const workspace = path.join(root, "ws");
    const created = ensureHome(home, { workspace });
    const p = homePaths(home);
    expect(created).toEqual(expect.arrayContaining([home, p.sessions, p.cron, p.index, workspace]));
    expect(existsSync(p.config)).toBe(false);
    expect((await readdir(workspace)).sort()).toEqual(["AGENTS.md", "HEARTBEAT.md", "IDENTITY.md", "MEMORY.md", "SOUL.md", "USER.md", "memory"]);
  });

  it("keeps the template workspace small: it is sent with every request", async () => {
    let total = 0;
    for (const file of templateFiles) total += (await stat(path.join(repoWorkspace, file))).size;
    expect(total).toBeLessThan(6 * 1024);
    for (const file of templateFiles) {
      expect((await readFile(path.join(repoWorkspace, file), "utf8")).startsWith("<!--")).toBe(true);
    }
  });
});
