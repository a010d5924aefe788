// The YAML front matter of a SKILL.md: the subset skill files use (Agent Skills format) —
// `key: value` scalars, quoted strings, `|` and `>` block scalars, nested maps by indentation
// and `- item` lists. Anything else is an error that names its line, never a guess.

export type FrontValue = string | FrontValue[] | { [key: string]: FrontValue };
export type FrontMatter = { [key: string]: FrontValue };

export type ParsedSkillFile =
  | { ok: true; data: FrontMatter; body: string }
  | { ok: false; error: string };

/** Splits `---\n…\n---` from the body and parses it. */
export function parseSkillFile(text: string): ParsedSkillFile {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = src.split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return { ok: false, error: "no front matter: SKILL.md must start with a line of three dashes (---)" };
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === "---" || l.trim() === "..."));
  if (end === -1) return { ok: false, error: "the front matter is not closed: add a line of three dashes (---) after it" };
  try {
    const data = parseBlock(lines.slice(1, end).map((text, i) => ({ text, no: i + 2 })));
    return { ok: true, data, body: lines.slice(end + 1).join("\n") };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

interface Line {
  text: string;
  no: number;
}

const indentOf = (l: string): number => l.length - l.trimStart().length;
const isBlank = (l: string): boolean => l.trim() === "" || l.trimStart().startsWith("#");

function parseBlock(lines: Line[]): FrontMatter {
  const out: FrontMatter = {};
  let i = 0;
  const base = lines.find((l) => !isBlank(l.text));
  const indent = base ? indentOf(base.text) : 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line.text)) {
      i++;
      continue;
    }
    if (indentOf(line.text) !== indent) throw new Error(`line ${line.no}: unexpected indentation`);
    if (line.text.includes("\t")) throw new Error(`line ${line.no}: tabs are not allowed in YAML indentation`);
    const m = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$/.exec(line.text.trim());
    if (!m) throw new Error(`line ${line.no}: expected "key: value", found ${JSON.stringify(line.text.trim().slice(0, 60))}`);
    const key = m[1]!;
    if (key in out) throw new Error(`line ${line.no}: "${key}" is given twice`);
    const rest = stripComment(m[2] ?? "");
    i++;
    const child: Line[] = [];
    while (i < lines.length && (isBlank(lines[i]!.text) || indentOf(lines[i]!.text) > indent)) child.push(lines[i++]!);
    while (child.length > 0 && isBlank(child.at(-1)!.text)) child.pop();
    if (rest === "|" || rest === ">" || rest === "|-" || rest === ">-") {
      out[key] = blockScalar(child, rest[0] === ">");
    } else if (rest !== "") {
      if (child.length > 0) throw new Error(`line ${child[0]!.no}: "${key}" already has a value on its own line`);
      out[key] = scalar(rest, line.no);
    } else if (child.length === 0) {
      out[key] = "";
    } else if (child[0]!.text.trimStart().startsWith("- ") || child[0]!.text.trim() === "-") {
      out[key] = list(child);
    } else {
      out[key] = parseBlock(child);
    }
  }
  return out;
}

function list(lines: Line[]): FrontValue[] {
  const items: FrontValue[] = [];
  for (const l of lines) {
    if (isBlank(l.text)) continue;
    const t = l.text.trim();
    if (!t.startsWith("-")) throw new Error(`line ${l.no}: expected a "- item" list entry`);
    items.push(scalar(stripComment(t.slice(1).trim()), l.no));
  }
  return items;
}

function blockScalar(lines: Line[], folded: boolean): string {
  const indent = Math.min(...lines.filter((l) => l.text.trim()).map((l) => indentOf(l.text)));
  const texts = lines.map((l) => l.text.slice(Number.isFinite(indent) ? indent : 0));
  return folded ? texts.join(" ").replace(/\s+/g, " ").trim() : texts.join("\n");
}

function scalar(raw: string, no: number): FrontValue {
  if (raw.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(raw);
      if (typeof v === "string") return v;
    } catch {
      // fall through to the error
    }
    throw new Error(`line ${no}: the double-quoted string is not closed or has a bad escape`);
  }
  if (raw.startsWith("'")) {
    if (raw.length < 2 || !raw.endsWith("'")) throw new Error(`line ${no}: the single-quoted string is not closed`);
    return raw.slice(1, -1).replace(/''/g, "'");
  }
  if (raw.startsWith("[")) {
    if (!raw.endsWith("]")) throw new Error(`line ${no}: the [list] is not closed`);
    const inner = raw.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map((s) => scalar(s.trim(), no));
  }
  if (raw.startsWith("{") || raw.startsWith("&") || raw.startsWith("*") || raw.startsWith("!")) {
    throw new Error(`line ${no}: flow maps, anchors and tags are not supported; write plain "key: value" lines`);
  }
  return raw;
}

/** A ` #` starts a comment in a plain scalar; quoted strings keep theirs. */
function stripComment(v: string): string {
  if (v.startsWith('"') || v.startsWith("'")) {
    const end = closingQuote(v);
    if (end === -1) return v.trim(); // unclosed: scalar() says so
    const rest = v.slice(end + 1);
    return /^\s*(#.*)?$/.test(rest) ? v.slice(0, end + 1) : v.trim();
  }
  const i = v.search(/\s#/);
  return (i === -1 ? v : v.slice(0, i)).trim();
}

/** Index of the quote that closes the string `v` starts with, or -1. */
function closingQuote(v: string): number {
  const q = v[0]!;
  for (let i = 1; i < v.length; i++) {
    if (q === '"' && v[i] === "\\") i++;
    else if (v[i] === q) {
      if (q === "'" && v[i + 1] === "'") i++;
      else return i;
    }
  }
  return -1;
}
