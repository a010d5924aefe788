// Where the configuration's generated reference lives (reference.ts makes it), relative to the package root.
export const SCHEMA_FILE = "config.schema.json";
export const REFERENCE_FILE = "docs/configuration.md";
export const REGENERATE = "npm run docs:config";
