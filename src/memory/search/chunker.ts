// Splits a markdown file into the pieces the search index stores: the paragraphs of one heading
// section, up to MAX_CHUNK_CHARS each, with the lines they came from so a hit can point at
// `MEMORY.md:12` and memory_get can open it there.

/** One searchable piece of a markdown file. */
export interface Chunk {
  /** 1-based line of the chunk's first line in the file. */
  line: number;
  /** 1-based line of its last line (inclusive). */
  endLine: number;
  /** The nearest heading above it as written (`## Pets`), or "" before the first heading. */
  heading: string;
  /**
   * The file's lines `line`..`endLine` joined with "\n" (blank lines between paragraphs kept, so
   * line i of the text is file line `line + i`). A line longer than MAX_CHUNK_CHARS is cut into
   * several chunks that share its line number.
   */
  text: string;
}

export const MAX_CHUNK_CHARS = 1500;

const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const FENCE = /^ {0,3}(?:```|~~~)/;

/**
 * Chunks `text` by heading section and paragraph. A section's paragraphs share a chunk while it
 * stays within MAX_CHUNK_CHARS; a longer paragraph is split at line boundaries. A leading
 * `<!-- … -->` block (the template's instructions to the owner) is skipped. Headings inside
 * fenced code are text, and a fence keeps its blank lines in one paragraph. Pure.
 */
export function chunkMarkdown(text: string): Chunk[] {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines[0]?.startsWith("\uFEFF")) lines[0] = lines[0].slice(1);
  // starts[i] = offset of line i in the "\n"-joined text, so any line range's length is O(1).
  const starts = new Array<number>(lines.length + 1);
  starts[0] = 0;
  for (let i = 0; i < lines.length; i++) starts[i + 1] = starts[i]! + lines[i]!.length + 1;
  const span = (from: number, to: number): number => starts[to + 1]! - starts[from]! - 1;

  const chunks: Chunk[] = [];
  let heading = "";
  /** The open chunk and paragraph, as 0-based inclusive line ranges; -1 when none. */
  let chunkFrom = -1;
  let chunkTo = -1;
  let paraFrom = -1;
  let paraTo = -1;

  const emit = (from: number, to: number, body = lines.slice(from, to + 1).join("\n")) => {
    chunks.push({ line: from + 1, endLine: to + 1, heading, text: body });
  };
  const closeChunk = () => {
    if (chunkFrom >= 0) emit(chunkFrom, chunkTo);
    chunkFrom = chunkTo = -1;
  };
  const closeParagraph = () => {
    if (paraFrom < 0) return;
    const [from, to] = [paraFrom, paraTo];
    paraFrom = paraTo = -1;
    if (chunkFrom >= 0 && span(chunkFrom, to) <= MAX_CHUNK_CHARS) {
      chunkTo = to;
      return;
    }
    closeChunk();
    if (span(from, to) <= MAX_CHUNK_CHARS) {
      [chunkFrom, chunkTo] = [from, to];
      return;
    }
    splitLongParagraph(from, to);
  };
  // Greedy at line boundaries; the last piece stays open so the next paragraph may join it.
  const splitLongParagraph = (from: number, to: number) => {
    let pieceFrom = from;
    for (let i = from; i <= to; i++) {
      if (lines[i]!.length > MAX_CHUNK_CHARS) {
        if (i > pieceFrom) emit(pieceFrom, i - 1);
        const line = lines[i]!;
        for (let at = 0; at < line.length; at += MAX_CHUNK_CHARS) emit(i, i, line.slice(at, at + MAX_CHUNK_CHARS));
        pieceFrom = i + 1;
      } else if (span(pieceFrom, i) > MAX_CHUNK_CHARS) {
        emit(pieceFrom, i - 1);
        pieceFrom = i;
      }
    }
    if (pieceFrom <= to) [chunkFrom, chunkTo] = [pieceFrom, to];
  };

  let inFence = false;
  for (let i = skipLeadingComment(lines); i < lines.length; i++) {
    const line = lines[i]!;
    if (!inFence && HEADING.test(line)) {
      closeParagraph();
      closeChunk();
      heading = line.trim();
      continue;
    }
    if (FENCE.test(line)) inFence = !inFence;
    else if (!inFence && line.trim() === "") {
      closeParagraph();
      continue;
    }
    if (paraFrom < 0) paraFrom = i;
    paraTo = i;
  }
  closeParagraph();
  closeChunk();
  return chunks;
}

/** The index of the first line after a leading `<!-- … -->` block; 0 when there is none. */
function skipLeadingComment(lines: string[]): number {
  let i = 0;
  while (i < lines.length && lines[i]!.trim() === "") i++;
  if (!lines[i]?.trimStart().startsWith("<!--")) return 0;
  const opener = lines[i]!.indexOf("<!--");
  for (let j = i; j < lines.length; j++) {
    if (lines[j]!.indexOf("-->", j === i ? opener + 4 : 0) !== -1) return j + 1;
  }
  return 0; // unclosed: not a comment block we understand, so index everything
}
