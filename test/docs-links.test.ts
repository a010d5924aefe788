// Every relative link of README.md and docs/ leads somewhere: the file exists, and a heading
// anchor (`#foo`, `file.md#foo`) names a heading of that file by GitHub's slug rules.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");

function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, "docs"), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
  return ["README.md", ...docs.sort()];
}

/** The text outside fenced code blocks and inline code, line by line (line numbers kept). */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split("\n").map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1]!.startsWith(fence)) fence = null;
      return "";
    }
    if (m) {
      fence = m[1]!;
      return "";
    }
    return line.replace(/(`+)[\s\S]*?\1/g, "");
  });
}

/** GitHub's heading anchor: the rendered text lower-cased, punctuation dropped, spaces as "-". */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/(\*\*|__|\*|\b_|_\b)/g, "") // emphasis
    .trim();
  return rendered.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors of a markdown file: its headings' slugs (repeats numbered as GitHub does) and explicit ids. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) fence = !fence;
    if (fence) continue;
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative link targets of a file with their line: inline links, images and reference definitions. */
function linksOf(file: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  proseLines(readFileSync(path.join(ROOT, file), "utf8")).forEach((line, i) => {
    const targets = [...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1]!);
    for (const target of targets) if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) out.push({ line: i + 1, target });
  });
  return out;
}

describe("the documentation's links", () => {
  it("every relative link of README.md and docs/ resolves, and every anchor it names exists", () => {
    const broken: string[] = [];
    const anchors = new Map<string, Set<string>>();
    for (const file of markdownFiles()) {
      for (const { line, target } of linksOf(file)) {
        const [pathPart = "", anchor] = target.split("#", 2) as [string, string | undefined];
        const dest = pathPart === "" ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)));
        const where = `${file}:${line} → ${target}`;
        if (!existsSync(path.join(ROOT, dest))) {
          broken.push(`${where}: no file ${dest}`);
          continue;
        }
        if (anchor === undefined || anchor === "") continue;
        if (!dest.endsWith(".md") || statSync(path.join(ROOT, dest)).isDirectory()) continue; // a line anchor of code (#L10) is GitHub's own
        if (!anchors.has(dest)) anchors.set(dest, anchorsOf(dest));
        if (!anchors.get(dest)!.has(decodeURIComponent(anchor))) broken.push(`${where}: no heading #${anchor} in ${dest}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("keeps the README short: at most 300 lines, the reference is in docs/", () => {
    expect(readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length - 1).toBeLessThanOrEqual(300);
  });

  it("every docs page a message or comment of src/ names exists", () => {
    const named = readdirSync(path.join(ROOT, "src"), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts"))
      .flatMap((e) => {
        const file = path.relative(ROOT, path.join(e.parentPath, e.name));
        return [...readFileSync(path.join(ROOT, file), "utf8").matchAll(/\bdocs\/[a-z0-9/-]+\.md/g)].map((m) => ({ file, page: m[0] }));
      });
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter(({ page }) => !existsSync(path.join(ROOT, page))).map(({ file, page }) => `${file} → ${page}`)).toEqual([]);
  });

  it("slugs headings as GitHub does", () => {
    expect(slug("Other models (Ollama, OpenRouter, Groq)")).toBe("other-models-ollama-openrouter-groq");
    expect(slug("`hearth doctor` — checks")).toBe("hearth-doctor--checks");
    expect(slug("What **Hearth** promises")).toBe("what-hearth-promises");
    expect(slug("[Upgrades](#x) & backups")).toBe("upgrades--backups");
    expect(slug("config_fields.ts")).toBe("config_fieldsts");
  });

  it("the link scan sees inline links, images and definitions, and skips code and other sites", () => {
    expect(linksOf("README.md").every((l) => !/^https?:/.test(l.target))).toBe(true);
  });
});
