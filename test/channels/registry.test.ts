// The registry is the one place a platform is declared: each channel page's settings table, `hearth
// init`'s template and doctor's checks come from its descriptors, and each template block, once
// uncommented, is a valid section whose defaults are the schema's.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import { CHANNELS, CONFIGURABLE, channelDescriptor } from "../../src/channels/registry.ts";
import { parseConfig } from "../../src/config/config.ts";
import { configTemplate } from "../../src/config/init.ts";
import { docsPages, settingsRows } from "../support/docs-settings.ts";

describe("the channel registry", () => {
  it("is each channel page's settings table, row for row, and no other page names a channels.* key", () => {
    for (const c of CONFIGURABLE) {
      const page = settingsRows(`docs/channels/${c.id}.md`);
      const registry = c.config.rows.map((r) => `| \`${r.key}\` | ${r.default} | ${r.meaning} |`);
      expect(page, c.id).toEqual(registry);
    }
    const elsewhere = docsPages()
      .filter((p) => !CONFIGURABLE.some((c) => p === path.join("docs", "channels", `${c.id}.md`)))
      .flatMap((p) => settingsRows(p).filter((r) => r.startsWith("| `channels.")).map((r) => `${p}: ${r}`));
    expect(elsewhere).toEqual([]);
  });

  it("has a page in docs/channels/ for every channel, the terminal's included", () => {
    const pages = docsPages().filter((p) => p.startsWith(path.join("docs", "channels") + path.sep)).map((p) => path.basename(p, ".md"));
    expect(pages.sort()).toEqual(CHANNELS.map((c) => (c.id === "cli" ? "terminal" : c.id)).sort());
  });

  it("documents every key of each section's schema", () => {
    for (const c of CONFIGURABLE) {
      const keys = Object.keys(parseConfig({ channels: { [c.id]: {} } }, { home: "/nonexistent", env: {} }).channels[c.id as "telegram"] ?? {});
      const documented = new Set(c.config.rows.map((r) => r.key.split(".")[2]));
      expect(keys.filter((k) => !documented.has(k)), c.id).toEqual([]);
    }
  });

  it("writes one commented block per channel into init's template; uncommented, each parses to its schema's defaults", () => {
    const template = configTemplate();
    for (const c of CONFIGURABLE) {
      const start = template.indexOf(`    // "${c.id}": {`);
      expect(start, c.id).toBeGreaterThan(0);
      const block = template
        .slice(start)
        .split("\n")
        .slice(0, c.config.template.split("\n").length + 2)
        .map((l) => l.replace(/^ {4}\/\/ ?/, ""))
        .join("\n")
        .replace(/,\s*$/, "");
      const errors: unknown[] = [];
      const section = (parse(`{${block}}`, errors as never, { allowTrailingComma: true }) as Record<string, Record<string, unknown>>)[c.id]!;
      expect(errors, c.id).toEqual([]);
      // The owner's own values (placeholders) are left out (a list of them becomes []); everything else must be the schema's own default.
      const lists = JSON.parse(JSON.stringify(section).replace(/\["<[^">]*>"(?:,"<[^">]*>")*\]/g, "[]")) as Record<string, unknown>;
      const kept = Object.fromEntries(Object.entries(lists).filter(([, v]) => !JSON.stringify(v).includes('"<')));
      const parsed = (parseConfig({ channels: { [c.id]: kept } }, { home: "/nonexistent", env: {} }).channels as Record<string, Record<string, unknown>>)[c.id]!;
      const defaults = (parseConfig({ channels: { [c.id]: {} } }, { home: "/nonexistent", env: {} }).channels as Record<string, Record<string, unknown>>)[c.id]!;
      for (const key of Object.keys(kept)) expect(parsed[key], `${c.id}.${key}`).toEqual(defaults[key]);
    }
  });

  it("names each channel's libraries at the exact versions the suite tests (devDependencies), none of them in Hearth's own install", () => {
    const pkg = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    for (const c of CHANNELS) {
      for (const spec of c.packages ?? []) {
        const at = spec.lastIndexOf("@");
        const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
        expect(pkg.devDependencies[name], spec).toBe(version);
        expect(pkg.dependencies[name], spec).toBeUndefined();
      }
    }
  });

  it("names each channel once, by an id its config key, chat addresses and records share", () => {
    const ids = CHANNELS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(channelDescriptor(id)?.id).toBe(id);
    for (const c of CONFIGURABLE) expect(c.config.rows.every((r) => r.key.startsWith(`channels.${c.id}.`)), c.id).toBe(true);
  });
});
