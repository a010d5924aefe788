// The layout of src/ as docs/architecture.md §1 draws it: its folder map lists every folder of
// src/ and no other, and its table of import directions allows every import src/ makes. The
// table is the one statement of the rule; this test reads it, so changing the rule means
// changing the document.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const SRC = path.join(ROOT, "src");
const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");

/** The folders of the map in §1 ("src/" first, two spaces of indent per level), as "agent/mcp". */
function mapFolders(): string[] {
  const start = doc.indexOf("<!-- folder map");
  const open = doc.indexOf("```\n", start) + 4;
  const lines = doc.slice(open, doc.indexOf("```", open)).split("\n").filter((l) => l.trim() !== "");
  expect(lines[0]).toBe("src/");
  const stack: string[] = [];
  const folders: string[] = [];
  for (const line of lines.slice(1)) {
    const m = /^((?: {2})+)([a-z0-9-]+)\/$/.exec(line);
    if (!m) throw new Error(`folder map line is not "<indent>name/": ${JSON.stringify(line)}`);
    const depth = m[1]!.length / 2 - 1;
    if (depth > stack.length) throw new Error(`folder map line indented too deep: ${JSON.stringify(line)}`);
    stack.length = depth;
    stack.push(m[2]!);
    folders.push(stack.join("/"));
  }
  return folders;
}

/** Every folder of src/ that holds a file somewhere below it (git keeps no empty folder). */
function srcFolders(dir = SRC, rel = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    const below = srcFolders(path.join(dir, e.name), r);
    if (below.length > 0 || readdirSync(path.join(dir, e.name), { withFileTypes: true }).some((f) => f.isFile())) out.push(r, ...below);
  }
  return out;
}

/** The import table of §1: folder → the folders it may import. */
function importTable(): Map<string, Set<string>> {
  const start = doc.indexOf("<!-- import directions");
  const rows = doc.slice(start).split("\n").slice(1);
  const table = new Map<string, Set<string>>();
  for (const row of rows.slice(2)) {
    if (!row.startsWith("|")) break;
    const cells = row.split("|").slice(1, -1).map((c) => c.trim());
    const folder = /^`([a-z0-9/-]+)\/`$/.exec(cells[0]!)?.[1];
    if (!folder) throw new Error(`import table row without a \`folder/\`: ${row}`);
    const allowed = [...cells[2]!.matchAll(/`([a-z0-9/-]+)`/g)].map((m) => m[1]!);
    table.set(folder, new Set(allowed));
  }
  return table;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.relative(SRC, path.join(e.parentPath, e.name)).split(path.sep).join("/"));
}

/** The rows of the ground floor, which every folder may import: "the ground floor" opens their "what lives there". */
function groundFloor(): Set<string> {
  const start = doc.indexOf("<!-- import directions");
  const rows = doc.slice(start).split("\n").slice(3);
  const ground = new Set<string>();
  for (const row of rows) {
    if (!row.startsWith("|")) break;
    const cells = row.split("|").slice(1, -1).map((c) => c.trim());
    if (cells[1]!.startsWith("the ground floor")) ground.add(/^`([a-z0-9/-]+)\/`$/.exec(cells[0]!)![1]!);
  }
  return ground;
}

/** The table row a file of src/ belongs to: its deepest folder with a row. */
function unitOf(file: string, folders: string[]): string {
  if (file === "cli.ts") return "cli";
  if (!file.includes("/")) throw new Error(`src/${file} is at the top of src/, where only cli.ts stands`);
  const owner = folders.filter((f) => file.startsWith(`${f}/`)).sort((a, b) => b.length - a.length)[0];
  if (!owner) throw new Error(`src/${file} is in no folder of the import table`);
  return owner;
}

/** Relative specifiers of static and dynamic imports and re-exports. */
function importsOf(text: string): string[] {
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return specs;
}

/** src/'s import graph: each file → the files of src/ it imports (relative specifiers resolved). */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(files.map((f) => [f, importsOf(readFileSync(path.join(SRC, f), "utf8")).map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(f), spec))).filter((t) => known.has(t))]));
}

/** One circle per back edge a depth-first walk meets, as "src/a.ts -> src/b.ts -> src/a.ts". */
function importCircles(graph: Map<string, string[]>): string[] {
  const circles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, "open");
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === "open") circles.push([...stack.slice(stack.indexOf(t)), t].map((x) => `src/${x}`).join(" -> "));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);
  return circles;
}

describe("the layout of src/", () => {
  it("the folder map of docs/architecture.md lists every folder of src/ and no other", () => {
    expect(mapFolders().sort()).toEqual(srcFolders().sort());
  });

  it("every folder of the import table exists, and nothing may import the gateway but the CLI and the gateway's own parts", () => {
    const table = importTable();
    const folders = srcFolders();
    for (const [folder, allowed] of table) {
      expect(folders, `table row ${folder}/`).toContain(folder);
      for (const a of allowed) expect(folders, `${folder}/ may import ${a}/`).toContain(a);
      if (allowed.has("gateway")) expect(folder === "cli" || folder.startsWith("gateway/"), `${folder}/ may not import gateway/`).toBe(true);
    }
    // Every top-level folder has a row.
    for (const f of folders.filter((f) => !f.includes("/"))) expect(table.has(f), `no row for ${f}/`).toBe(true);
  });

  it("every import in src/ goes in a direction the table allows", () => {
    const table = importTable();
    const folders = [...table.keys()];
    const ground = groundFloor();
    const crossings: string[] = [];
    for (const file of tsFiles(SRC)) {
      const from = unitOf(file, folders);
      for (const spec of importsOf(readFileSync(path.join(SRC, file), "utf8"))) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
        if (target.startsWith("../")) continue; // outside src/ (none today)
        const to = unitOf(target, folders);
        if (to === from || (ground.has(to) && !ground.has(from))) continue;
        const allowed = table.get(from) ?? new Set<string>();
        // A sub-folder without a row of its own counts as its folder; one with a row may still use its parent's table.
        const covered = [...allowed].some((a) => to === a || to.startsWith(`${a}/`));
        if (!covered) crossings.push(`src/${file} (${from}) imports ${spec} (${to})`);
      }
    }
    expect(crossings).toEqual([]);
  });

  it("src/ holds folders and one file, the entry point cli.ts; the ground floor is process/, state/ and fields/", () => {
    const top = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
    expect(top).toEqual(["cli.ts"]);
    expect([...groundFloor()].sort()).toEqual(["fields", "process", "state"]);
  });

  it("no file of src/ is over 500 lines", () => {
    const long = tsFiles(SRC)
      .map((f) => ({ f, lines: readFileSync(path.join(SRC, f), "utf8").split("\n").length - 1 }))
      .filter((x) => x.lines > 500)
      .map((x) => `src/${x.f}: ${x.lines} lines`);
    expect(long).toEqual([]);
  });

  it("the gateway's top level holds at most 20 files: the message path, the rest in rooms of their own", () => {
    const top = readdirSync(path.join(SRC, "gateway")).filter((n) => n.endsWith(".ts"));
    expect(top.length, top.join(", ")).toBeLessThanOrEqual(20);
  });

  it("no files of src/ import each other in a circle (type-only and lazy imports count)", () => {
    expect(importCircles(importGraph(tsFiles(SRC)))).toEqual([]);
  });

  it("the circle finder names the files of each circle", () => {
    const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts", "d.ts"]], ["d.ts", []], ["e.ts", ["e.ts"]]]);
    expect(importCircles(graph)).toEqual(["src/a.ts -> src/b.ts -> src/c.ts -> src/a.ts", "src/e.ts -> src/e.ts"]);
  });

  it("the import scan sees the forms src/ uses", () => {
    expect(importsOf(`import { a } from "../x.ts";\nimport type { B } from "./y.ts";\nconst m = await import("../../z.ts");\nexport { c } from "./w.ts";`)).toEqual(["../x.ts", "./y.ts", "../../z.ts", "./w.ts"]);
  });
});
