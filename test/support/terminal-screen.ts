// What a pseudo-terminal's screen shows (test/support/pty-run.py copies its raw output).

/**
 * What a terminal shows for `raw` output, as far as readline's line editing goes: a carriage
 * return (or cursor to column 1) goes to the line's start, erase sequences clear the rest of
 * the line, other sequences are dropped, and text overwrites.
 */
export function rendered(raw: string): string {
  const lines: string[] = [""];
  let col = 0;
  for (const m of raw.matchAll(/\x1b\[([0-9;?]*)([A-Za-z])|\r\n|\n|\r|[^\x1b\r\n]/gu)) {
    const row = lines.length - 1;
    if (m[0] === "\n" || m[0] === "\r\n") (lines.push(""), (col = 0));
    else if (m[0] === "\r" || (m[2] === "G" && (m[1] === "" || m[1] === "1"))) col = 0;
    else if (m[2] === "K" || m[2] === "J") lines[row] = lines[row]!.slice(0, col);
    else if (!m[2]) {
      const chars = [...lines[row]!];
      chars[col++] = m[0];
      lines[row] = chars.join("");
    }
  }
  return lines.join("\n");
}
