import { describe, expect, it } from "vitest";
import { splitMessage } from "../../src/channels/chunk.ts";

const nonWhitespace = (s: string) => s.replace(/\s+/g, "");

/** Every fence line toggles a block open or closed; a chunk must end with all blocks closed. */
function fencesBalanced(chunk: string): boolean {
  let open = false;
  for (const line of chunk.split("\n")) {
    if (!/^ {0,3}```/.test(line)) continue;
    open = open ? !/^ {0,3}```\s*$/.test(line) : true;
  }
  return !open;
}

/** Sentences of `n` characters or so, words of various lengths, no blank lines. */
function prose(n: number, seed = 1): string {
  const words = ["alpha", "be", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"];
  let out = "";
  let i = seed;
  while (out.length < n) {
    out += words[i % words.length]! + (i % 13 === 0 ? ". " : " ");
    i = (i * 7 + 3) % 101;
  }
  return out.slice(0, n).trim();
}

function paragraphs(count: number, size: number): string {
  return Array.from({ length: count }, (_, i) => prose(size, i + 1)).join("\n\n");
}

function codeBlock(lang: string, lines: number, width = 40): string {
  const body = Array.from({ length: lines }, (_, i) => `  line_${i} = ${"x".repeat(width - 12)};`).join("\n");
  return `\`\`\`${lang}\n${body}\n\`\`\``;
}

function expectWellFormed(chunks: string[], max: number): void {
  expect(chunks.length).toBeGreaterThan(0);
  for (const c of chunks) {
    expect(c.length).toBeLessThanOrEqual(max);
    expect(c).toBe(c.trim());
    expect(c).not.toBe("");
  }
}

describe("splitMessage", () => {
  it("returns short text as one trimmed chunk and blank text as none", () => {
    expect(splitMessage("  hello world \n", 100)).toEqual(["hello world"]);
    expect(splitMessage(" \n\n\t ", 100)).toEqual([]);
    expect(splitMessage("", 100)).toEqual([]);
  });

  it("prefers a paragraph boundary over a later line boundary", () => {
    const text = `${"a".repeat(30)}\n\n${"b".repeat(30)}\n${"c".repeat(30)}`;
    expect(splitMessage(text, 80)).toEqual(["a".repeat(30), `${"b".repeat(30)}\n${"c".repeat(30)}`]);
  });

  it("prefers a line boundary over a later space", () => {
    const text = `${"a".repeat(30)}\n${"b".repeat(20)} ${"c".repeat(20)} ${"d".repeat(20)}`;
    expect(splitMessage(text, 70)).toEqual(["a".repeat(30), `${"b".repeat(20)} ${"c".repeat(20)} ${"d".repeat(20)}`]);
  });

  it("does not make an early paragraph break a message of its own", () => {
    const text = `**Reminder**\n\n${"word ".repeat(1_000)}`;
    const chunks = splitMessage(text, 4_000);
    expect(chunks[0]!.length).toBeGreaterThan(3_000);
    expect(chunks[0]!.startsWith("**Reminder**")).toBe(true);
    expect(chunks.join(" ").replace(/\s+/g, " ").trim()).toBe(text.replace(/\s+/g, " ").trim());
  });

  it("prefers a space over a hard cut, and hard-cuts only a word longer than the limit", () => {
    expect(splitMessage("aaaa bbbb cccc", 10)).toEqual(["aaaa bbbb", "cccc"]);
    expect(splitMessage("aaaa bbbbbbbb", 10)).toEqual(["aaaa", "bbbbbbbb"]);
    expect(splitMessage("x".repeat(25), 10)).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
  });

  it("never splits a surrogate pair on a hard cut", () => {
    const chunks = splitMessage("😀".repeat(15), 9);
    for (const c of chunks) expect(c).toMatch(/^(?:😀)+$/u);
    expect(chunks.join("")).toBe("😀".repeat(15));
  });

  it("keeps a code block that fits whole, moving it to the next chunk", () => {
    const code = codeBlock("py", 10);
    const text = `${prose(150)}\n${code}\nafter the code`;
    const chunks = splitMessage(text, code.length + 20);
    expect(chunks).toHaveLength(2);
    expect(chunks[1]!.startsWith(code)).toBe(true);
    expectWellFormed(chunks, code.length + 20);
  });

  it("closes an oversized code block and reopens it with its language tag", () => {
    const code = codeBlock("typescript", 60);
    const text = `Here is the file:\n\n${code}\n\nThat is all.`;
    const max = 500;
    const chunks = splitMessage(text, max);
    expectWellFormed(chunks, max);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(fencesBalanced(c)).toBe(true);
    for (const c of chunks.slice(1, -1)) {
      expect(c.startsWith("```typescript\n")).toBe(true);
      expect(c.endsWith("\n```")).toBe(true);
    }
    // Every code line survives exactly once and no line is cut in two.
    const codeLines = chunks.flatMap((c) => c.split("\n")).filter((l) => l.startsWith("  line_"));
    expect(codeLines).toEqual(code.split("\n").slice(1, -1));
    // The indentation of a code line at the start of a reopened chunk is kept.
    expect(chunks[2]!.split("\n")[1]).toMatch(/^ {2}line_/);
  });

  it("leaves the fences alone with reopenCodeBlocks: false", () => {
    const code = codeBlock("sh", 40);
    const chunks = splitMessage(code, 400, { reopenCodeBlocks: false });
    expectWellFormed(chunks, 400);
    expect(chunks.filter((c) => c.includes("```"))).toHaveLength(2);
    expect(nonWhitespace(chunks.join("\n"))).toBe(nonWhitespace(code));
  });

  it("splits a 6,000-character answer with a code block in the middle into 2 chunks outside the block", () => {
    const code = codeBlock("js", 25);
    const text = `${paragraphs(8, 330)}\n\n${code}\n\n${paragraphs(8, 330)}`;
    expect(text.length).toBeGreaterThan(5900);
    expect(text.length).toBeLessThan(6500);
    const chunks = splitMessage(text, 4000);
    expect(chunks).toHaveLength(2);
    expectWellFormed(chunks, 4000);
    expect(chunks.filter((c) => c.includes(code))).toHaveLength(1);
    for (const c of chunks) expect(fencesBalanced(c)).toBe(true);
  });

  it("splits 4,500 characters at 2,000 into 3 chunks", () => {
    const text = paragraphs(16, 290);
    expect(text.length).toBeGreaterThanOrEqual(4500);
    const chunks = splitMessage(text, 2000);
    expect(chunks).toHaveLength(3);
    expectWellFormed(chunks, 2000);
    // Each cut falls between paragraphs.
    expect(chunks.join("\n\n")).toBe(text);
  });

  it("keeps every chunk within the limit and loses no content, whatever the input", () => {
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 200; round++) {
      const parts: string[] = [];
      const count = 1 + rand(8);
      for (let i = 0; i < count; i++) {
        const kind = rand(4);
        if (kind === 0) parts.push(codeBlock(["", "ts", "bash"][rand(3)]!, 1 + rand(30), 14 + rand(60)));
        else if (kind === 1) parts.push("w".repeat(1 + rand(300)));
        else parts.push(prose(1 + rand(700), rand(50)).replace(/\. /g, rand(2) ? ".\n" : ".\n\n"));
      }
      const text = parts.join(rand(2) ? "\n\n" : "\n");
      const max = 80 + rand(900);
      const chunks = splitMessage(text, max);
      expectWellFormed(chunks, max);
      for (const c of chunks) expect(fencesBalanced(c)).toBe(true);
      // Apart from fence lines (the splitter adds closers and reopeners), the chunks hold exactly
      // the original text, in order.
      expect(withoutFenceLines(chunks.join("\n"))).toBe(withoutFenceLines(text));
    }
  });
});

function withoutFenceLines(text: string): string {
  return nonWhitespace(
    text
      .split("\n")
      .filter((l) => !/^ {0,3}```\S*\s*$/.test(l))
      .join("\n"),
  );
}
