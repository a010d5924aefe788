// `npm run docs:config`: writes config.schema.json and docs/configuration.md from the config
// schema (src/config/reference.ts). Run it after changing src/config/schema.ts.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { configReferenceText, configSchemaText } from "../src/config/reference.ts";
import { REFERENCE_FILE, SCHEMA_FILE } from "../src/config/reference-files.ts";

const root = path.resolve(import.meta.dirname, "..");
writeFileSync(path.join(root, SCHEMA_FILE), configSchemaText());
writeFileSync(path.join(root, REFERENCE_FILE), configReferenceText());
process.stdout.write(`wrote ${SCHEMA_FILE} and ${REFERENCE_FILE}\n`);
