// The configuration's reference, made from the schema (schema.ts) so that it cannot drift from
// what Hearth accepts: `config.schema.json` (JSON Schema, for editors: config.json names it in
// `$schema`) and `docs/configuration.md`. `npm run docs:config` writes both; a test holds the
// files to what this returns.
import { z } from "zod";
import { configSchema } from "./schema.ts";

import { REGENERATE, SCHEMA_FILE } from "./reference-files.ts";

type Json = { [key: string]: unknown };

// Marks the schema carries for Hearth itself (secret-fields.ts) are no JSON Schema keywords.
const OWN_MARKS = ["secret", "move"];

/** The JSON Schema of config.json, as its file holds it (two-space indent, final newline). */
export function configSchemaText(): string {
  const schema = z.toJSONSchema(configSchema, {
    target: "draft-07",
    io: "input",
    unrepresentable: "any",
    override: ({ jsonSchema }) => {
      for (const mark of OWN_MARKS) delete (jsonSchema as Json)[mark];
      // zod's int bounds: noise to a reader.
      if ((jsonSchema as Json).maximum === Number.MAX_SAFE_INTEGER) delete (jsonSchema as Json).maximum;
      if ((jsonSchema as Json).minimum === Number.MIN_SAFE_INTEGER) delete (jsonSchema as Json).minimum;
    },
  }) as Json;
  const properties = schema.properties as Json;
  const withSchemaKey = {
    $schema: schema.$schema,
    title: "Hearth configuration (config.json)",
    ...schema,
    properties: { $schema: { type: "string", description: "The JSON Schema that editors check this file against; Hearth ignores it." }, ...properties },
  };
  return `${JSON.stringify(withSchemaKey, null, 2)}\n`;
}

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

/** docs/configuration.md: one table per section of config.json. */
export function configReferenceText(): string {
  const schema = JSON.parse(configSchemaText()) as Json;
  const sections = new Map<string, Row[]>();
  const top: Row[] = [];
  for (const [key, node] of Object.entries(schema.properties as Json)) {
    if (key === "$schema") continue;
    const n = node as Json;
    if (isSection(n)) {
      const rows: Row[] = [];
      walk(key, n, rows);
      sections.set(key, rows);
    } else top.push(row(key, n));
  }
  const out = [
    "# Configuration reference",
    "",
    `<!-- Made from src/config/schema.ts by \`${REGENERATE}\`; edit the schema's descriptions, not this file. -->`,
    "",
    "`<home>/config.json` is JSON with comments; every key is optional and has the default shown here.",
    `Editors check and complete it against [\`${SCHEMA_FILE}\`](../${SCHEMA_FILE}), which \`hearth init\` names in its \`"$schema"\` key.`,
    "A `<name>` in a key is one you choose (a provider's, a server's).",
    "",
    "## Top level",
    "",
    ...table(top),
  ];
  for (const [key, rows] of sections) {
    const description = (schema.properties as Json)[key] as Json;
    out.push("", `## ${key}`, "");
    if (typeof description.description === "string") out.push(escapeText(description.description), "");
    out.push(...table(rows));
  }
  return `${out.join("\n")}\n`;
}

function isSection(n: Json): boolean {
  return n.type === "object" && typeof n.properties === "object";
}

function walk(prefix: string, node: Json, rows: Row[]): void {
  for (const [key, child] of Object.entries((node.properties ?? {}) as Json)) {
    const c = child as Json;
    const path = `${prefix}.${key}`;
    if (isSection(c)) {
      if (typeof c.description === "string" || c.default !== undefined) rows.push(row(path, c));
      walk(path, c, rows);
    } else if (c.type === "object" && isSection((c.additionalProperties ?? {}) as Json)) {
      rows.push(row(path, c));
      walk(`${path}.<name>`, c.additionalProperties as Json, rows);
    } else rows.push(row(path, c));
  }
}

function row(key: string, n: Json): Row {
  return { key, type: typeOf(n), default: n.default === undefined ? "" : `\`${JSON.stringify(n.default)}\``, description: typeof n.description === "string" ? n.description : "" };
}

function typeOf(n: Json): string {
  if (Array.isArray(n.enum)) return n.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (n.const !== undefined) return JSON.stringify(n.const);
  if (Array.isArray(n.anyOf)) return [...new Set((n.anyOf as Json[]).map(typeOf))].join(" \\| ");
  if (Array.isArray(n.oneOf)) return [...new Set((n.oneOf as Json[]).map(typeOf))].join(" \\| ");
  if (n.type === "array") return `${typeOf((n.items ?? {}) as Json)}[]`;
  if (n.type === "object" && n.additionalProperties && typeof n.additionalProperties === "object" && !n.properties) return `map of ${typeOf(n.additionalProperties as Json)}`;
  if (typeof n.type === "string") return n.type;
  if (Array.isArray(n.type)) return n.type.join(" \\| ");
  return "any";
}

function table(rows: Row[]): string[] {
  return ["| key | type | default | description |", "|---|---|---|---|", ...rows.map((r) => `| \`${r.key}\` | ${r.type} | ${r.default} | ${escapeText(r.description)} |`)];
}

const escapeText = (s: string): string => s.replaceAll("|", "\\|").replaceAll("<", "&lt;").replaceAll("\n", " ");
