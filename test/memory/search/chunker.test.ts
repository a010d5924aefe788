import { describe, expect, it } from "vitest";
import { chunkMarkdown, MAX_CHUNK_CHARS } from "../../../src/memory/search/chunker.ts";

describe("chunkMarkdown", () => {
  it("makes one chunk per heading section with its lines and heading", () => {
    const text = [
      "Intro line", //          1
      "", //                    2
      "## Pets", //             3
      "Whiskers is a cat.", //  4
      "", //                    5
      "She likes fish.", //     6
      "", //                    7
      "### Work", //            8
      "Works at Acme.", //      9
      "Since 2020.", //        10
    ].join("\n");
    expect(chunkMarkdown(text)).toEqual([
      { line: 1, endLine: 1, heading: "", text: "Intro line" },
      { line: 4, endLine: 6, heading: "## Pets", text: "Whiskers is a cat.\n\nShe likes fish." },
      { line: 9, endLine: 10, heading: "### Work", text: "Works at Acme.\nSince 2020." },
    ]);
  });

  it("keeps line numbers right with CRLF line ends and several blank lines", () => {
    const chunks = chunkMarkdown("# A\r\n\r\n\r\nfirst\r\n\r\n\r\n\r\nsecond\r\n");
    expect(chunks).toEqual([{ line: 4, endLine: 8, heading: "# A", text: "first\n\n\n\nsecond" }]);
  });

  it("starts a new chunk when the next paragraph would pass the size limit", () => {
    const para = "word ".repeat(200).trim(); // 999 characters
    const chunks = chunkMarkdown(`## S\n${para}\n\n${para}\n`);
    expect(chunks.map((c) => [c.line, c.endLine, c.heading])).toEqual([
      [2, 2, "## S"],
      [4, 4, "## S"],
    ]);
  });

  it("splits a long paragraph at line boundaries, each piece within the limit", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `- item ${i} ${"x".repeat(40)}`);
    const chunks = chunkMarkdown(`# List\n${lines.join("\n")}\n`);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
    expect(chunks[0]!.line).toBe(2);
    expect(chunks.at(-1)!.endLine).toBe(101);
    // Contiguous, no line lost or repeated, and every piece starts at a whole line.
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.line).toBe(chunks[i - 1]!.endLine + 1);
    expect(chunks.map((c) => c.text).join("\n")).toBe(lines.join("\n"));
  });

  it("cuts a single line longer than the limit into pieces on that line", () => {
    const long = "y".repeat(MAX_CHUNK_CHARS * 2 + 10);
    const chunks = chunkMarkdown(`short\n${long}\n`);
    expect(chunks.map((c) => [c.line, c.text.length])).toEqual([
      [1, 5],
      [2, MAX_CHUNK_CHARS],
      [2, MAX_CHUNK_CHARS],
      [2, 10],
    ]);
  });

  it("skips a leading comment block but keeps counting its lines", () => {
    const text = "<!--\nInstructions for the owner.\n## Not a heading\n-->\n# Memory\n\n- likes tea\n";
    expect(chunkMarkdown(text)).toEqual([{ line: 7, endLine: 7, heading: "# Memory", text: "- likes tea" }]);
  });

  it("indexes everything when the leading comment never closes", () => {
    expect(chunkMarkdown("<!-- open\nstill text\n")).toHaveLength(1);
  });

  it("treats # inside fenced code as text and keeps a fence's blank lines in one paragraph", () => {
    const text = "## Code\n```sh\n# a comment\n\necho hi\n```\n";
    expect(chunkMarkdown(text)).toEqual([{ line: 2, endLine: 6, heading: "## Code", text: "```sh\n# a comment\n\necho hi\n```" }]);
  });

  it("returns nothing for empty files and heading-only files", () => {
    expect(chunkMarkdown("")).toEqual([]);
    expect(chunkMarkdown("# 2026-11-22\n\n")).toEqual([]);
  });

  it("chunks a daily log into one chunk per entry", () => {
    const log =
      "# 2026-11-22\n\n" +
      "### 14:05 · telegram · Alice\n> what is up\n\nNot much.\n\n" +
      "### 14:09 · telegram · Alice\n> and now\n\nStill not much.\n\n";
    expect(chunkMarkdown(log).map((c) => [c.heading, c.line, c.endLine])).toEqual([
      ["### 14:05 · telegram · Alice", 4, 6],
      ["### 14:09 · telegram · Alice", 9, 11],
    ]);
  });
});
