// The configuration reference is made from the schema: config.schema.json and
// docs/configuration.md are what src/config/reference.ts makes now, and the config.json that
// `hearth init` and `hearth setup` write names the installed schema, which loading ignores.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../../src/config/config.ts";
import { homePaths } from "../../src/config/home.ts";
import { configTemplate, initHome } from "../../src/config/init.ts";
import { configReferenceText, configSchemaText } from "../../src/config/reference.ts";
import { REFERENCE_FILE, REGENERATE, SCHEMA_FILE } from "../../src/config/reference-files.ts";
import { writeSetup } from "../../src/config/setup-config.ts";
import { silentLogger } from "../../src/process/log.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCHEMA_URL = `file://${ROOT}/config.schema.json`;
const SCHEMA_LINE = `  "$schema": "${SCHEMA_URL}",`;

let home = "";
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = "";
});

describe("the configuration reference", () => {
  it("config.schema.json and docs/configuration.md are what the schema makes now", () => {
    for (const [file, made] of [[SCHEMA_FILE, configSchemaText()], [REFERENCE_FILE, configReferenceText()]] as const) {
      const onDisk = existsSync(path.join(ROOT, file)) ? readFileSync(path.join(ROOT, file), "utf8") : "(missing)";
      expect(onDisk === made, `${file} is not what src/config/schema.ts makes: run \`${REGENERATE}\``).toBe(true);
    }
    expect(REGENERATE).toBe("npm run docs:config");
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string>; files?: string[] };
    expect(pkg.scripts["docs:config"]).toBe("node scripts/docs-config.ts");
    // No "files" list: the package ships every file of the repository but those ignored, the schema among them.
    if (pkg.files) expect(pkg.files).toContain(SCHEMA_FILE);
  });

  it("the schema lists every section, refuses unknown keys and allows \"$schema\"", () => {
    const schema = JSON.parse(configSchemaText()) as { $schema: string; additionalProperties: boolean; properties: Record<string, { type?: string; default?: unknown; description?: string; properties?: Record<string, { default?: unknown }> }> };
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.$schema).toEqual({ type: "string", description: "The JSON Schema that editors check this file against; Hearth ignores it." });
    expect(schema.properties.agent!.properties!.maxTurns!.default).toBe(25);
    // Hearth's own marks (which keys are secrets) are no JSON Schema keywords.
    expect(configSchemaText()).not.toMatch(/"secret":|"move":/);
    expect(configReferenceText()).toContain("| `agent.maxTurns` | integer | `25` |");
  });
});

describe('config.json names the schema in "$schema"', () => {
  it("hearth init writes the installed schema's file URL as the first key, and the file is there", () => {
    home = mkdtempSync(path.join(os.tmpdir(), "hearth-schema-"));
    initHome(home);
    const lines = readFileSync(homePaths(home).config, "utf8").split("\n");
    const open = lines.indexOf("{");
    expect(lines.slice(open, open + 3)).toEqual(["{", "  // What editors check and complete this file against (Hearth itself ignores the key).", SCHEMA_LINE]);
    expect(readFileSync(fileURLToPath(SCHEMA_URL), "utf8")).toBe(configSchemaText());
  });

  it("a config.json with \"$schema\" loads to exactly the config without it", () => {
    home = mkdtempSync(path.join(os.tmpdir(), "hearth-schema-"));
    const env = {};
    const withKey = parseConfig({ $schema: SCHEMA_URL, agent: { maxTurns: 7 } }, { home, env });
    expect(withKey).toEqual(parseConfig({ agent: { maxTurns: 7 } }, { home, env }));
    expect("$schema" in withKey).toBe(false);
    initHome(home);
    expect(loadConfig({ home, env })).toEqual(parseConfig({}, { home, env }));
    expect(configTemplate()).toContain(`\n${SCHEMA_LINE}\n`);
  });

  it("hearth setup's fresh config.json keeps the line", () => {
    home = mkdtempSync(path.join(os.tmpdir(), "hearth-schema-"));
    const file = writeSetup(home, { model: { kind: "anthropic", model: "claude-sonnet-5-5", apiKey: "sk-ant-x" }, channels: {} }, silentLogger);
    expect(readFileSync(file, "utf8").split("\n")).toContain(SCHEMA_LINE);
  });
});
