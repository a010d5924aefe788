// Markdown images in an answer (`![alt](path)`): which ones name a workspace file, and the text
// that is shown once they are sent as pictures of their own.
//
// The rule, the same for the streamed preview and the final text: an image that resolves to a
// file the chat may receive is taken out of the text (a line of its own goes with its line) and
// sent after the text, with its alt text as caption. Anything else stays exactly as written: a
// URL (never fetched), a path outside the scope, a missing file, and anything inside code.

/** One `![alt](target)` in the text, outside code. `start`/`end` index the whole reference. */
export interface ImageRef {
  start: number;
  end: number;
  alt: string;
  /** The destination as written, without angle brackets or title. */
  target: string;
}

// ![alt](target "title") and ![alt](<target with spaces>): no nested brackets in alt, no newline.
const IMAGE = /!\[([^\]\n]*)\]\((?:<([^>\n]+)>|([^)\s]+))(?:\s+"[^"\n]*")?\)/g;

/** The image references of `text`, in order, skipping fenced code blocks and inline code spans. */
export function findImageRefs(text: string): ImageRef[] {
  const code = codeRanges(text);
  const refs: ImageRef[] = [];
  for (const m of text.matchAll(IMAGE)) {
    const start = m.index;
    const end = start + m[0].length;
    if (code.some(([a, b]) => start < b && end > a)) continue;
    refs.push({ start, end, alt: m[1]!.trim(), target: (m[2] ?? m[3]!).trim() });
  }
  return refs;
}

/** A URL (any scheme, or protocol-relative): left as text, never fetched. */
export const isUrl = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");

/** The path a target names: percent-escapes decoded when they are valid, else as written. */
export function targetPath(target: string): string {
  try {
    return decodeURIComponent(target);
  } catch {
    return target;
  }
}

/**
 * `text` without the references in `taken`: a reference alone on its line goes with the line,
 * one inside a line with one of the spaces around it; runs of blank lines left behind shrink
 * to one.
 */
export function removeRefs(text: string, taken: readonly ImageRef[]): string {
  if (taken.length === 0) return text;
  let out = "";
  let at = 0;
  for (const r of [...taken].sort((a, b) => a.start - b.start)) {
    let start = r.start;
    let end = r.end;
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const lineEndRaw = text.indexOf("\n", end);
    const lineEnd = lineEndRaw < 0 ? text.length : lineEndRaw;
    if (text.slice(lineStart, start).trim() === "" && text.slice(end, lineEnd).trim() === "") {
      start = lineStart;
      end = lineEndRaw < 0 ? lineEnd : lineEnd + 1;
    } else if (text[start - 1] === " " && (end === lineEnd || /[\s.,;:!?)]/.test(text[end]!))) {
      start--;
    } else if (text[end] === " ") {
      end++;
    }
    start = Math.max(start, at);
    out += text.slice(at, start);
    at = end;
  }
  out += text.slice(at);
  return out.replace(/\n{3,}/g, "\n\n");
}

/**
 * While the answer streams: the start of an image reference not complete yet (`![ch`,
 * `![chart](out/ch`) is held back from the preview, so the raw syntax never flashes. Returns
 * the index where such a tail starts, or the text's length.
 */
export function pendingRefStart(text: string): number {
  const open = text.lastIndexOf("![");
  if (open < 0) return text.length;
  const tail = text.slice(open);
  if (tail.includes("\n")) return text.length;
  const whole = new RegExp(IMAGE.source).exec(tail);
  if (whole && whole.index === 0) return text.length;
  if (codeRanges(text).some(([a, b]) => open >= a && open < b)) return text.length;
  return open;
}

/** [start, end) of fenced code blocks (``` or ~~~, unclosed runs to the end) and inline code spans. */
function codeRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const fence = /^ {0,3}(`{3,}|~{3,})[^\n]*$/gm;
  let open: { at: number; marker: string } | undefined;
  for (const m of text.matchAll(fence)) {
    const marker = m[1]!;
    if (!open) open = { at: m.index, marker };
    else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && m[0].trim() === marker) {
      ranges.push([open.at, m.index + m[0].length]);
      open = undefined;
    }
  }
  if (open) ranges.push([open.at, text.length]);
  for (const m of text.matchAll(/(`+)[^`]*?\1/g)) {
    if (!ranges.some(([a, b]) => m.index >= a && m.index < b)) ranges.push([m.index, m.index + m[0].length]);
  }
  return ranges;
}
