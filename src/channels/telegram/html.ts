// The model's markdown → Telegram's HTML subset (b, i, s, code, pre, a, blockquote), and →
// readable plain text for when Telegram rejects the HTML anyway. One small parser feeds both
// renderers, so they agree on what is formatting and what is literal text.
//
// The parser is deliberately conservative: anything that does not clearly open and close stays
// literal (unbalanced markers, snake_case_words, 2*3*4, links to unsupported schemes), and the
// HTML renderer builds tags only from matched pairs, so the output always nests correctly.

type Inline =
  | { type: "text"; text: string }
  | { type: "code"; text: string }
  | { type: "bold" | "italic" | "strike"; children: Inline[] }
  | { type: "link"; url: string; children: Inline[] };

/** A line outside code blocks; quotes hold these too. */
type LineBlock =
  | { type: "heading"; content: Inline[] }
  | { type: "rule" }
  /** `lead` is literal text put before the content: indentation and a list marker. */
  | { type: "line"; lead: string; content: Inline[] };

type Block = LineBlock | { type: "code"; lang: string; text: string } | { type: "quote"; lines: LineBlock[] };

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const QUOTE = /^ {0,3}>/;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const TASK = /^\[([ xX])\][ \t]+(.*)$/;
const NUMBERED = /^([ \t]*)(\d{1,9}[.)])[ \t]+(.*)$/;
const LINK_SCHEMES = /^(?:https?:\/\/|tg:\/\/|mailto:)/i;
const BARE_URL = /^https?:\/\/[^\s<>]+/i;
const AUTOLINK = /^<((?:https?:\/\/|tg:\/\/|mailto:)[^\s<>]+)>/i;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}]/u;

/** Markdown → Telegram HTML (parse_mode "HTML"). Text is escaped; tags always nest. */
export function markdownToTelegramHtml(md: string): string {
  return parseBlocks(md).map(blockToHtml).join("\n");
}

/** Markdown → plain text without markers, for sending without a parse mode. */
export function stripMarkdown(md: string): string {
  return parseBlocks(md).map(blockToPlain).join("\n");
}

// ── blocks ──────────────────────────────────────────────────────────────────────────────────

function parseBlocks(md: string): Block[] {
  const lines = md.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      while (i < lines.length && !closesFence(lines[i]!, marker)) body.push(lines[i++]!);
      i++; // the closing fence (past the end when the block was never closed)
      blocks.push({ type: "code", lang: fence[2]!, text: body.join("\n") });
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted: LineBlock[] = [];
      // Telegram cannot nest quotes: ">> x" joins the outer quote.
      while (i < lines.length && QUOTE.test(lines[i]!)) {
        quoted.push(parseLine(lines[i++]!.replace(/^ {0,3}(?:>[ \t]?)+/, "")));
      }
      blocks.push({ type: "quote", lines: quoted });
      continue;
    }
    blocks.push(parseLine(line));
    i++;
  }
  return blocks;
}

function closesFence(line: string, marker: string): boolean {
  const m = FENCE_CLOSE.exec(line);
  return !!m && m[1]![0] === marker[0] && m[1]!.length >= marker.length;
}

function parseLine(line: string): LineBlock {
  const heading = HEADING.exec(line);
  if (heading) return { type: "heading", content: parseInline(heading[1]!) };
  if (RULE.test(line)) return { type: "rule" };
  const bullet = BULLET.exec(line);
  if (bullet) {
    const task = TASK.exec(bullet[2]!);
    if (task) {
      return { type: "line", lead: `${bullet[1]}• ${task[1] === " " ? "☐" : "☑"} `, content: parseInline(task[2]!) };
    }
    return { type: "line", lead: `${bullet[1]}• `, content: parseInline(bullet[2]!) };
  }
  const numbered = NUMBERED.exec(line);
  if (numbered) return { type: "line", lead: `${numbered[1]}${numbered[2]} `, content: parseInline(numbered[3]!) };
  return { type: "line", lead: "", content: parseInline(line) };
}

// ── inline ──────────────────────────────────────────────────────────────────────────────────

function parseInline(s: string, allowLinks = true): Inline[] {
  const out: Inline[] = [];
  const memo: EmphasisMemo = new Map();
  let buf = "";
  const flush = () => {
    if (buf) out.push({ type: "text", text: buf });
    buf = "";
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length && ESCAPABLE.test(s[i + 1]!)) {
      buf += s[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      const span = matchCodeSpan(s, i);
      if (span) {
        flush();
        out.push({ type: "code", text: span.text });
        i = span.end;
      } else {
        const run = runLength(s, i, "`");
        buf += s.slice(i, i + run);
        i += run;
      }
      continue;
    }
    if (c === "[" && allowLinks) {
      const link = matchLink(s, i);
      if (link) {
        flush();
        if (LINK_SCHEMES.test(link.url)) {
          const children = link.text.trim() ? parseInline(link.text, false) : [{ type: "text" as const, text: link.url }];
          out.push({ type: "link", url: link.url, children });
        } else {
          out.push({ type: "text", text: s.slice(i, link.end) });
        }
        i = link.end;
        continue;
      }
    }
    if (c === "<" && allowLinks) {
      const auto = AUTOLINK.exec(s.slice(i));
      if (auto) {
        flush();
        out.push({ type: "link", url: auto[1]!, children: [{ type: "text", text: auto[1]! }] });
        i += auto[0].length;
        continue;
      }
    }
    if ((c === "h" || c === "H") && !WORD.test(s[i - 1] ?? "")) {
      // A bare URL stays verbatim: its underscores and asterisks are not formatting.
      const url = BARE_URL.exec(s.slice(i));
      if (url) {
        buf += url[0];
        i += url[0].length;
        continue;
      }
    }
    if (c === "*" || c === "_" || c === "~") {
      const em = matchEmphasis(s, i, memo);
      if (em) {
        flush();
        const children = parseInline(s.slice(em.contentStart, em.contentEnd), allowLinks);
        out.push(wrapEmphasis(c, em.size, children));
        i = em.end;
      } else {
        const run = runLength(s, i, c);
        buf += s.slice(i, i + run);
        i += run;
      }
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

function wrapEmphasis(c: string, size: number, children: Inline[]): Inline {
  if (c === "~") return { type: "strike", children };
  if (size === 1) return { type: "italic", children };
  if (size === 2) return { type: "bold", children };
  return { type: "bold", children: [{ type: "italic", children }] };
}

function runLength(s: string, i: number, c: string): number {
  let j = i;
  while (s[j] === c) j++;
  return j - i;
}

/** `code`, ``co`de``: a backtick run closed by a run of the same length. */
function matchCodeSpan(s: string, i: number): { text: string; end: number } | undefined {
  const n = runLength(s, i, "`");
  let j = i + n;
  while (j < s.length) {
    if (s[j] !== "`") {
      j++;
      continue;
    }
    const m = runLength(s, j, "`");
    if (m === n) {
      let text = s.slice(i + n, j);
      if (text.length > 2 && text.startsWith(" ") && text.endsWith(" ") && text.trim()) text = text.slice(1, -1);
      return { text, end: j + m };
    }
    j += m;
  }
  return undefined;
}

/** [text](url) with balanced brackets and parentheses; the url has no spaces. */
function matchLink(s: string, i: number): { text: string; url: string; end: number } | undefined {
  let depth = 0;
  let j = i;
  for (; j < s.length; j++) {
    const c = s[j];
    if (c === "\\") j++;
    else if (c === "`") {
      const span = matchCodeSpan(s, j);
      if (span) j = span.end - 1;
    } else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) break;
  }
  if (j >= s.length || s[j + 1] !== "(") return undefined;
  const close = j;
  let parens = 0;
  for (j = close + 2; j < s.length; j++) {
    const c = s[j]!;
    if (/\s/.test(c)) return undefined;
    if (c === "(") parens++;
    else if (c === ")" && parens-- === 0) break;
  }
  if (j >= s.length) return undefined;
  const url = s.slice(close + 2, j);
  return url ? { text: s.slice(i + 1, close), url, end: j + 1 } : undefined;
}

interface Emphasis {
  size: number;
  contentStart: number;
  contentEnd: number;
  end: number;
}

/** Memoised emphasis matches of one string: the closer search asks about the same openers often. */
type EmphasisMemo = Map<number, Emphasis | null>;

/** Deeper nesting than this is left literal (keeps pathological input from exhausting the stack). */
const MAX_EMPHASIS_DEPTH = 32;

/**
 * Emphasis opened by the delimiter run at `i`: `*`/`_` (italic), `**`/`__` (bold), `***`
 * (both), `~~` (strike). An opener is followed by a non-space and not preceded by a letter or
 * digit; a closer is preceded by a non-space and not followed by one: so snake_case_words and
 * 2*3*4 stay literal. A run of three that finds no closer of three tries `*` + `**` inside.
 */
function matchEmphasis(s: string, i: number, memo: EmphasisMemo, depth = 0): Emphasis | undefined {
  const known = memo.get(i);
  if (known !== undefined) return known ?? undefined;
  if (depth > MAX_EMPHASIS_DEPTH) return undefined;
  const c = s[i]!;
  const run = runLength(s, i, c);
  const next = s[i + run] ?? "";
  let found: Emphasis | undefined;
  if (next && !/\s/.test(next) && !WORD.test(s[i - 1] ?? "")) {
    const sizes = c === "~" ? (run === 2 ? [2] : []) : run === 3 ? [3, 1, 2] : run <= 2 ? [run] : [];
    for (const size of sizes) {
      const contentStart = i + size;
      const closer = findCloser(s, contentStart, c, size, memo, depth);
      if (closer !== undefined) {
        found = { size, contentStart, contentEnd: closer, end: closer + size };
        break;
      }
    }
  }
  memo.set(i, found ?? null);
  return found;
}

/**
 * Index of the closing delimiter: the first `size` characters of a run, so in `**a *b***` the
 * inner `*` closes first and the outer `**` takes the rest. Code spans and nested emphasis are
 * skipped whole, so `*a **b** c*` closes at the last star, not inside `**b**`.
 */
function findCloser(s: string, from: number, c: string, size: number, memo: EmphasisMemo, depth: number): number | undefined {
  let j = from;
  while (j < s.length) {
    const cj = s[j]!;
    if (cj === "\\") {
      j += 2;
      continue;
    }
    if (cj === "`") {
      const span = matchCodeSpan(s, j);
      j = span ? span.end : j + runLength(s, j, "`");
      continue;
    }
    if (cj !== "*" && cj !== "_" && cj !== "~") {
      j++;
      continue;
    }
    const m = runLength(s, j, cj);
    if (cj === c && j > from && m >= size && !/\s/.test(s[j - 1] ?? "") && !WORD.test(s[j + m] ?? "")) {
      return j;
    }
    const nested = matchEmphasis(s, j, memo, depth + 1);
    j = nested ? nested.end : j + m;
  }
  return undefined;
}

// ── rendering ───────────────────────────────────────────────────────────────────────────────

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

function blockToHtml(block: Block): string {
  switch (block.type) {
    case "code": {
      const lang = block.lang.replace(/[^\w#+.-]/g, "");
      const body = escapeHtml(block.text);
      return lang ? `<pre><code class="language-${lang}">${body}</code></pre>` : `<pre>${body}</pre>`;
    }
    case "quote": {
      const inner = trimBlankLines(block.lines.map(lineToHtml));
      return inner ? `<blockquote>${inner}</blockquote>` : "";
    }
    case "heading":
    case "rule":
    case "line":
      return lineToHtml(block);
    default:
      return block satisfies never;
  }
}

function lineToHtml(line: LineBlock): string {
  switch (line.type) {
    case "heading":
      return wrapHtml("b", line.content, new Set());
    case "rule":
      return "──────────";
    case "line":
      return escapeHtml(line.lead) + inlineToHtml(line.content, new Set());
    default:
      return line satisfies never;
  }
}

/**
 * `open` holds the tags around this point: a tag already open is not opened again (Telegram
 * rejects some nestings, and <b> inside <b> means nothing), its markers are simply dropped.
 */
function inlineToHtml(nodes: readonly Inline[], open: ReadonlySet<string>): string {
  let out = "";
  for (const node of nodes) {
    switch (node.type) {
      case "text":
        out += escapeHtml(node.text);
        break;
      case "code":
        out += `<code>${escapeHtml(node.text)}</code>`;
        break;
      case "bold":
        out += wrapHtml("b", node.children, open);
        break;
      case "italic":
        out += wrapHtml("i", node.children, open);
        break;
      case "strike":
        out += wrapHtml("s", node.children, open);
        break;
      case "link":
        out += open.has("a")
          ? inlineToHtml(node.children, open)
          : `<a href="${escapeAttribute(node.url)}">${inlineToHtml(node.children, new Set([...open, "a"]))}</a>`;
        break;
      default:
        node satisfies never;
    }
  }
  return out;
}

function wrapHtml(tag: string, children: readonly Inline[], open: ReadonlySet<string>): string {
  if (open.has(tag)) return inlineToHtml(children, open);
  const inner = inlineToHtml(children, new Set([...open, tag]));
  return inner ? `<${tag}>${inner}</${tag}>` : "";
}

function blockToPlain(block: Block): string {
  switch (block.type) {
    case "code":
      return block.text;
    case "quote":
      return trimBlankLines(block.lines.map(lineToPlain))
        .split("\n")
        .map((l) => (l.trim() ? `> ${l}` : ">"))
        .join("\n");
    case "heading":
    case "rule":
    case "line":
      return lineToPlain(block);
    default:
      return block satisfies never;
  }
}

function lineToPlain(line: LineBlock): string {
  switch (line.type) {
    case "heading":
      return inlineToPlain(line.content);
    case "rule":
      return "──────────";
    case "line":
      return line.lead + inlineToPlain(line.content);
    default:
      return line satisfies never;
  }
}

function inlineToPlain(nodes: readonly Inline[]): string {
  let out = "";
  for (const node of nodes) {
    switch (node.type) {
      case "text":
      case "code":
        out += node.text;
        break;
      case "bold":
      case "italic":
      case "strike":
        out += inlineToPlain(node.children);
        break;
      case "link": {
        const text = inlineToPlain(node.children);
        out += text === node.url ? text : `${text} (${node.url.replace(/^mailto:/i, "")})`;
        break;
      }
      default:
        node satisfies never;
    }
  }
  return out;
}

function trimBlankLines(lines: readonly string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && !lines[start]!.trim()) start++;
  while (end > start && !lines[end - 1]!.trim()) end--;
  return lines.slice(start, end).join("\n");
}
