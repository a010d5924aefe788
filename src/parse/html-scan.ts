// Linear, bounded passes over untrusted HTML that never build a DOM: how deep its tags nest
// (checked before a DOM is built, whose cost grows far faster than the depth) and its text with
// the tags stripped (what the model gets when a page is too complex to extract).

/** Elements that never have a closing tag, so never add a level. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "!doctype"]);
/** Elements whose content is raw text up to their closing tag: never markup, never text for the reader. */
const RAW = new Set(["script", "style", "noscript", "template", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "svg", "math"]);

/**
 * The deepest nesting of elements in `html`, counting until it passes `max` (then `max + 1`).
 * Unclosed tags count as open: a browser would nest them too.
 */
export function nestingDepth(html: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt < 0) break;
    const tag = readTag(html, lt);
    if (!tag) break;
    i = tag.end;
    if (tag.comment || !tag.name) continue;
    if (tag.closing) {
      if (depth > 0) depth--;
      continue;
    }
    if (VOID.has(tag.name) || tag.selfClosing) continue;
    if (RAW.has(tag.name)) {
      i = closeOf(html, tag.name, i);
      continue;
    }
    depth++;
    if (depth > deepest) deepest = depth;
    if (deepest > max) return max + 1;
  }
  return deepest;
}

interface Tag {
  /** Where scanning goes on: after the tag's ">", or after a comment's "-->" (the end of `html` if it has none). */
  end: number;
  comment: boolean;
  closing: boolean;
  /** Lower case; "" when none follows "<" (or "</"). */
  name: string;
  /** Written `<name … />`. */
  selfClosing: boolean;
}

/** The comment or tag that starts at `lt` (a "<"), or null when no ">" closes it. */
function readTag(html: string, lt: number): Tag | null {
  if (html.startsWith("<!--", lt)) {
    const close = html.indexOf("-->", lt + 4);
    return { end: close < 0 ? html.length : close + 3, comment: true, closing: false, name: "", selfClosing: false };
  }
  const gt = html.indexOf(">", lt + 1);
  if (gt < 0) return null;
  const closing = html[lt + 1] === "/";
  return { end: gt + 1, comment: false, closing, name: tagName(html, closing ? lt + 2 : lt + 1), selfClosing: html[gt - 1] === "/" };
}

/** Where the closing tag of raw element `name` starts (case-insensitive), or the end of `html`. */
function closeOf(html: string, name: string, from: number): number {
  const re = new RegExp(`</${name}`, "gi");
  re.lastIndex = from;
  return re.exec(html)?.index ?? html.length;
}

function tagName(html: string, from: number): string {
  let end = from;
  while (end < html.length && end - from < 32 && isNameChar(html.charCodeAt(end))) end++;
  return html.slice(from, end).toLowerCase();
}

/** a-z, A-Z, 0-9, "!", ":" and "-". */
const isNameChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 58) || c === 33 || c === 45;

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/**
 * The readable text of `html`: tags dropped, script/style content skipped, block tags as line
 * breaks, blank space collapsed as it goes; stops once it has `maxChars` characters. One pass.
 */
export function stripTags(html: string, maxChars: number): { text: string; cut: boolean } {
  const parts: string[] = [];
  let length = 0;
  // The blank space owed before the next word: none, a space, or a line break.
  let gap: "" | " " | "\n" = "";
  const addText = (raw: string) => {
    const words = decodeEntities(raw).split(/\s+/);
    for (let w = 0; w < words.length; w++) {
      if (w > 0 && gap === "") gap = " ";
      const word = words[w]!;
      if (word === "") continue;
      if (length > 0 && gap) parts.push(gap), (length += 1);
      parts.push(word);
      length += word.length;
      gap = "";
    }
  };
  let i = 0;
  while (i < html.length && length < maxChars) {
    const lt = html.indexOf("<", i);
    const textEnd = lt < 0 ? html.length : lt;
    if (textEnd > i) addText(html.slice(i, Math.min(textEnd, i + maxChars - length + 16)));
    if (lt < 0) break;
    const tag = readTag(html, lt);
    if (!tag) break;
    i = tag.end;
    if (tag.comment) continue;
    if (!tag.closing && RAW.has(tag.name)) {
      i = closeOf(html, tag.name, i);
      continue;
    }
    if (BLOCK.has(tag.name)) gap = "\n";
    else if (!INLINE.has(tag.name)) gap ||= " ";
  }
  const text = parts.join("");
  if (text.length > maxChars) return { text: text.slice(0, maxChars), cut: true };
  return { text, cut: length >= maxChars && i < html.length };
}

/** Tags inside a word's run of text: `<b>bo</b>ld` is one word. */
const INLINE = new Set(["a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var"]);
const BLOCK = new Set(["p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "blockquote", "pre", "ul", "ol", "table", "hr", "dd", "dt"]);

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" || e[1] === "X" ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}
