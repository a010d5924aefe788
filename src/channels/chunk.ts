// Splits a reply into messages that fit a platform's length limit (Telegram 4,000 of its 4,096;
// Discord 2,000). Works on the markdown source, before any rendering, so every chunk renders on
// its own: a fenced code block is never cut when it fits in one message, and one that does not
// fit is closed at the end of a chunk and reopened (same fence, same language tag) in the next.

export interface SplitOptions {
  /**
   * Close an oversized code block at the end of a chunk and reopen it at the start of the next,
   * so that every chunk has balanced fences. Default true. With false the block is still cut
   * only at line boundaries, but the fences are left as they were.
   */
  reopenCodeBlocks?: boolean;
}

interface Fence {
  /** Index of the first character of the opening fence line. */
  start: number;
  /** Index just after the opening fence line (its "\n", or the end of the text). */
  openerEnd: number;
  /** Index of the first character of the closing fence line (text length when unclosed). */
  closerStart: number;
  /** Index just after the closing fence line (text length when unclosed). */
  end: number;
  /** The opening line as written, without indentation: "```ts". */
  opener: string;
  /** The fence characters: "```" or "~~~~". */
  marker: string;
}

/** Break quality, best last: a cut between paragraphs beats one between lines, then words. */
type CutClass = 0 | 1 | 2 | 3;
const HARD: CutClass = 0;
const SPACE: CutClass = 1;
const LINE: CutClass = 2;
const PARAGRAPH: CutClass = 3;

interface Cut {
  at: number;
  /** The oversized fence this cut falls inside, if any. */
  fence: Fence | undefined;
}

const OPENER = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const CLOSER = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/**
 * Splits `markdown` into chunks of at most `maxLength` characters, in order, without empty chunks
 * and with whitespace trimmed at the chunk edges. Prefers a paragraph boundary, then a line
 * boundary, then a space; cuts a word only when nothing else fits. Returns [] for blank input.
 */
export function splitMessage(markdown: string, maxLength: number, opts: SplitOptions = {}): string[] {
  if (!Number.isInteger(maxLength) || maxLength < 1) {
    throw new RangeError(`splitMessage: maxLength must be a positive integer, got ${maxLength}`);
  }
  const reopen = opts.reopenCodeBlocks ?? true;
  const text = markdown.replace(/\r\n?/g, "\n");
  const fences = findFences(text);
  // Reopening needs room for the opener, the closer and some content; a fence whose opener line
  // is absurdly long for the limit is split without it rather than looping forever.
  const reopens = (f: Fence) => reopen && f.opener.length + f.marker.length + 2 + 16 <= maxLength;
  const chunks: string[] = [];

  let pos = skipWhitespace(text, 0);
  while (pos < text.length) {
    const current = fences.find((f) => f.openerEnd < pos && pos < f.closerStart);
    const prefix = current && reopens(current) ? `${current.opener}\n` : "";
    const rest = text.slice(pos).trimEnd();
    if (prefix.length + rest.length <= maxLength) {
      chunks.push(prefix + rest);
      break;
    }
    const cut = chooseCut(text, pos, maxLength - prefix.length, fences, maxLength, reopens);
    const suffix = cut.fence && reopens(cut.fence) ? `\n${cut.fence.marker}` : "";
    const body = text.slice(pos, cut.at).trimEnd();
    if (body.trim()) chunks.push(prefix + body + suffix);
    // Inside a reopened block only the line break goes: the next line's indentation is code.
    pos = cut.fence && reopens(cut.fence) ? cut.at + (text[cut.at] === "\n" ? 1 : 0) : skipWhitespace(text, cut.at);
  }
  return chunks;
}

/**
 * The best place to end the chunk that starts at `pos`: the highest cut class available past
 * a quarter of the budget, and within it the latest position. `budget` is the room left after any
 * reopened fence prefix.
 */
function chooseCut(
  text: string,
  pos: number,
  budget: number,
  fences: readonly Fence[],
  maxLength: number,
  reopens: (f: Fence) => boolean,
): Cut {
  const best: Array<Cut | undefined> = [undefined, undefined, undefined, undefined];
  const last = Math.min(pos + budget, text.length - 1);
  let fenceIdx = fences.length - 1;
  for (let p = last; p > pos; p--) {
    while (fenceIdx >= 0 && fences[fenceIdx]!.start >= p) fenceIdx--;
    const around = fenceIdx >= 0 && fences[fenceIdx]!.end > p ? fences[fenceIdx] : undefined;
    const cls = classify(text, p);
    if (cls === undefined) continue;
    if (around) {
      // A block that fits in one message is never cut; an oversized one only between its
      // content lines (or, for a single endless line, anywhere in it), never in a fence line.
      if (around.end - around.start <= maxLength) continue;
      if (p <= around.openerEnd || p >= around.closerStart - 1) continue;
      if (cls === SPACE) continue;
      const suffixLength = reopens(around) ? around.marker.length + 1 : 0;
      if (p - pos + suffixLength > budget) continue;
    }
    if (!best[cls]) best[cls] = { at: p, fence: around };
    if (cls === PARAGRAPH) break;
  }
  // A better kind of break wins only if it leaves the chunk at least a quarter full: a heading
  // and a blank line must not become a message of their own. A word is cut only as a last resort.
  for (const cls of [PARAGRAPH, LINE, SPACE]) {
    const cut = best[cls];
    if (cut && cut.at - pos >= budget / 4) return cut;
  }
  for (const cls of [PARAGRAPH, LINE, SPACE, HARD]) {
    const cut = best[cls];
    if (cut) return cut;
  }
  // Unreachable in practice (a hard cut always exists); guarantees progress regardless.
  return { at: Math.max(pos + 1, last), fence: undefined };
}

/** How good a cut before `text[p]` is; undefined when it would split a surrogate pair. */
function classify(text: string, p: number): CutClass | undefined {
  const c = text[p];
  if (c === "\n") {
    return isBlankLineAround(text, p) ? PARAGRAPH : LINE;
  }
  if (c === " " || c === "\t") return SPACE;
  const code = text.charCodeAt(p);
  const prev = text.charCodeAt(p - 1);
  if (code >= 0xdc00 && code <= 0xdfff && prev >= 0xd800 && prev <= 0xdbff) return undefined;
  return HARD;
}

/** True when the line break at `p` ends or starts a blank line. */
function isBlankLineAround(text: string, p: number): boolean {
  let after = p + 1;
  while (text[after] === " " || text[after] === "\t") after++;
  if (after >= text.length || text[after] === "\n") return true;
  let before = p - 1;
  while (text[before] === " " || text[before] === "\t") before--;
  return before < 0 || text[before] === "\n";
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/** Fenced code blocks in order. An unclosed fence runs to the end of the text. */
function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  let open: Omit<Fence, "closerStart" | "end"> | undefined;
  let i = 0;
  for (;;) {
    const nl = text.indexOf("\n", i);
    const lineEnd = nl === -1 ? text.length : nl;
    const line = text.slice(i, lineEnd);
    if (!open) {
      const m = OPENER.exec(line);
      // A backtick fence's info string cannot contain a backtick (``` inline ``` is not a fence).
      if (m && !(m[1]!.startsWith("`") && m[2]!.includes("`"))) {
        open = { start: i, openerEnd: lineEnd, opener: line.trim(), marker: m[1]! };
      }
    } else {
      const m = CLOSER.exec(line);
      if (m && m[1]![0] === open.marker[0] && m[1]!.length >= open.marker.length) {
        fences.push({ ...open, closerStart: i, end: lineEnd });
        open = undefined;
      }
    }
    if (nl === -1) break;
    i = nl + 1;
  }
  if (open) fences.push({ ...open, closerStart: text.length, end: text.length });
  return fences;
}
