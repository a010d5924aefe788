// The settings tables of docs/: each topic page lists the config.json keys it explains in one
// table headed `| key | default | meaning |`. Tests read them to check that every key the docs
// name is written by `hearth init` and that each channel's page holds its descriptor's rows.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** Every markdown page of docs/ (relative to the repository), sorted. */
export function docsPages(): string[] {
  return readdirSync(path.join(ROOT, "docs"), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .sort();
}

/** The rows of a page's settings tables (`| key | default | meaning |`), as written. */
export function settingsRows(page: string): string[] {
  const lines = readFileSync(path.join(ROOT, page), "utf8").split("\n");
  const rows: string[] = [];
  lines.forEach((line, i) => {
    if (line !== "| key | default | meaning |") return;
    for (const row of lines.slice(i + 2)) {
      if (!row.startsWith("|")) break;
      rows.push(row);
    }
  });
  return rows;
}
