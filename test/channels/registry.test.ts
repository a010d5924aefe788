// The registry is the one place a platform is declared: the README's configuration table, `hearth
// init`'s template and doctor's checks come from its descriptors, and each template block, once
// uncommented, is a valid section whose defaults are the schema's.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import { CHANNELS, CONFIGURABLE, channelDescriptor } from "../../src/channels/registry.ts";
import { parseConfig } from "../../src/config/config.ts";
import { configTemplate } from "../../src/config/init.ts";

const README = readFileSync(path.resolve(import.meta.dirname, "../../README.md"), "utf8");

describe("the channel registry", () => {
  it("is the README's configuration table for every channels.* key, row for row", () => {
    const readme = README.split("\n").filter((l) => l.startsWith("| `channels."));
    const registry = CONFIGURABLE.flatMap((c) => c.config.rows.map((r) => `| \`${r.key}\` | ${r.default} | ${r.meaning} |`));
    expect(readme).toEqual(registry);
  });

  it("documents every key of each section's schema", () => {
    for (const c of CONFIGURABLE) {
      const keys = Object.keys(parseConfig({ channels: { [c.id]: {} } }, { home: "/nonexistent", env: {} }).channels[c.id as "telegram"] ?? {});
      const documented = new Set(c.config.rows.map((r) => r.key.split(".")[2]));
      expect(keys.filter((k) => !documented.has(k)), c.id).toEqual([]);
    }
  });

  /** An id of the platform's own shape where digits are not one (the placeholders of the template are filled with it). */
  const EXAMPLE_ID: Record<string, string> = { matrix: "@ann:example.org" };

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
      // The placeholders become real values; everything else must be the schema's own default.
      const id = EXAMPLE_ID[c.id] ?? "12345";
      const filled = JSON.parse(JSON.stringify(section).replace(/"<[^">]*>"/g, JSON.stringify(id)));
      const parsed = parseConfig({ channels: { [c.id]: filled } }, { home: "/nonexistent", env: {} }).channels as Record<string, Record<string, unknown>>;
      const defaults = parseConfig({ channels: { [c.id]: { ownerIds: [id] } } }, { home: "/nonexistent", env: {} }).channels as Record<string, Record<string, unknown>>;
      const groups = c.groupsKey!;
      const secretKey = c.credentials?.[0]?.key ?? "token";
      const { [secretKey]: _t, [groups]: g, ...rest } = parsed[c.id]!;
      const { [secretKey]: _d, [groups]: dg, ...restDefaults } = defaults[c.id]!;
      expect(rest, c.id).toEqual(restDefaults);
      expect({ ...(g as object), allow: [] }, c.id).toEqual(dg);
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
