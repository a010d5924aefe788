import { describe, expect, it } from "vitest";
import { markdownToTelegramHtml as toHtml, stripMarkdown } from "../../../src/channels/telegram/html.ts";

const ALLOWED = new Set(["b", "i", "s", "u", "code", "pre", "a", "blockquote", "tg-spoiler"]);

/**
 * A tiny model of Telegram's HTML parser: only allowed tags, every tag closed in order, no `<`,
 * `>` or stray `&` in text, nothing inside <code> except inside <pre>, no nested <a>/<blockquote>.
 * Returns the problems found (empty when valid).
 */
function telegramHtmlProblems(html: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const token = /<(\/?)([a-z-]+)((?:\s+[a-z-]+="[^"<>]*")*)\s*>|&(?:amp|lt|gt|quot);|([<>&])/g;
  for (let m = token.exec(html); m; m = token.exec(html)) {
    if (m[4]) {
      problems.push(`unescaped ${m[4]} at ${m.index}`);
      continue;
    }
    const name = m[2];
    if (!name) continue; // an entity
    if (!ALLOWED.has(name)) problems.push(`tag <${name}> not allowed`);
    if (m[1]) {
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open ?? "nothing"}>`);
      continue;
    }
    if (stack.includes("code") || (stack.includes("pre") && name !== "code")) problems.push(`<${name}> inside code`);
    if ((name === "a" || name === "blockquote") && stack.includes(name)) problems.push(`nested <${name}>`);
    stack.push(name);
  }
  if (stack.length) problems.push(`unclosed: ${stack.join(",")}`);
  return problems;
}

function expectValid(html: string): string {
  expect(telegramHtmlProblems(html)).toEqual([]);
  return html;
}

describe("telegram html checker (test helper)", () => {
  it("catches bad markup", () => {
    expect(telegramHtmlProblems("<b><i>x</b></i>")).not.toEqual([]);
    expect(telegramHtmlProblems("<b>x")).not.toEqual([]);
    expect(telegramHtmlProblems("a < b")).not.toEqual([]);
    expect(telegramHtmlProblems("<script>x</script>")).not.toEqual([]);
    expect(telegramHtmlProblems('<b>x</b> &amp; <a href="https://x">y</a>')).toEqual([]);
  });
});

describe("markdownToTelegramHtml", () => {
  it("escapes HTML in text so it renders literally", () => {
    expect(expectValid(toHtml("<script>alert(1)</script> & co"))).toBe(
      "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co",
    );
    expect(toHtml("a &amp; b")).toBe("a &amp;amp; b");
  });

  it("renders fenced code blocks escaped, with the language, and nothing formatted inside", () => {
    const md = "Before\n\n```ts\nif (a < b && **c**) { _x_ = `y`; }\n  indented\n```\n\nAfter";
    expect(expectValid(toHtml(md))).toBe(
      'Before\n\n<pre><code class="language-ts">if (a &lt; b &amp;&amp; **c**) { _x_ = `y`; }\n  indented</code></pre>\n\nAfter',
    );
    expect(toHtml("```\nplain <x>\n```")).toBe("<pre>plain &lt;x&gt;</pre>");
    expect(expectValid(toHtml("```py\nnever closed <\n"))).toContain("<pre><code class=\"language-py\">never closed &lt;");
  });

  it("renders inline code escaped and unformatted", () => {
    expect(expectValid(toHtml("run `rm -rf <dir> && echo **hi**` now"))).toBe(
      "run <code>rm -rf &lt;dir&gt; &amp;&amp; echo **hi**</code> now",
    );
    expect(toHtml("``a ` b``")).toBe("<code>a ` b</code>");
  });

  it("renders bold, italic and strikethrough", () => {
    expect(expectValid(toHtml("**b** __b2__ *i* _i2_ ~~s~~ ***bi***"))).toBe(
      "<b>b</b> <b>b2</b> <i>i</i> <i>i2</i> <s>s</s> <b><i>bi</i></b>",
    );
    expect(expectValid(toHtml("**bold *italic* bold** and *it **bold***"))).toBe(
      "<b>bold <i>italic</i> bold</b> and <i>it <b>bold</b></i>",
    );
  });

  it("leaves snake_case, arithmetic and unbalanced markers literal", () => {
    for (const md of ["snake_case_words and my_var_name", "2*3*4 and a**2 + b**2", "**unclosed and *also", "x ~~ y", "5 * 3 = 15 * 1", "__init__py_", "file_name_ here", "x*y* z"]) {
      expect(expectValid(toHtml(md))).toBe(md);
    }
    expect(toHtml("call my_func_name with **care")).toBe("call my_func_name with **care");
  });

  it("keeps underscores and stars in bare URLs", () => {
    expect(toHtml("see https://example.com/_private_/c/*d* now")).toBe("see https://example.com/_private_/c/*d* now");
  });

  it("renders links with safe schemes only and escapes the attribute", () => {
    expect(expectValid(toHtml('[docs](https://x.dev/?a=1&b="2") and [me](mailto:a@b.c)'))).toBe(
      '<a href="https://x.dev/?a=1&amp;b=&quot;2&quot;">docs</a> and <a href="mailto:a@b.c">me</a>',
    );
    expect(expectValid(toHtml("[**bold** link](tg://user?id=1)"))).toBe('<a href="tg://user?id=1"><b>bold</b> link</a>');
    expect(expectValid(toHtml("[click](javascript:alert(1)) [rel](./file.md)"))).toBe(
      "[click](javascript:alert(1)) [rel](./file.md)",
    );
    expect(toHtml("[a](https://x.dev/wiki/Foo_(bar))")).toBe('<a href="https://x.dev/wiki/Foo_(bar)">a</a>');
    expect(toHtml("<https://x.dev>")).toBe('<a href="https://x.dev">https://x.dev</a>');
  });

  it("renders headings bold, quotes as blockquote and bullets with •", () => {
    expect(expectValid(toHtml("# Title\n## Sub **x** ##"))).toBe("<b>Title</b>\n<b>Sub x</b>");
    expect(expectValid(toHtml("> first *line*\n> second\n>> deeper\n\nafter"))).toBe(
      "<blockquote>first <i>line</i>\nsecond\ndeeper</blockquote>\n\nafter",
    );
    expect(expectValid(toHtml("- one\n* two **b**\n  + nested\n- [ ] todo\n- [x] done\n1. first\n2) second"))).toBe(
      "• one\n• two <b>b</b>\n  • nested\n• ☐ todo\n• ☑ done\n1. first\n2) second",
    );
    expect(toHtml("---")).toBe("──────────");
  });

  it("always produces valid nesting, even for messy input", () => {
    const messy = [
      "**a *b** c*",
      "***x** y*",
      "~~**a~~**",
      "*[x](https://a.b) **y*z**",
      "[a [b](https://x)](https://y)",
      "> **q\n> q2**",
      "# **h *i***",
      "_a **b_ c**",
      "``` a ```",
      "`unclosed **b** <x>",
      "*".repeat(50),
      "**a** **b** ~~c~~ `d` _e_ [f](https://g) <h>",
    ];
    for (const md of messy) expectValid(toHtml(md));
    // Random soup of markers and text.
    const pieces = ["*", "**", "_", "__", "~~", "`", "[", "](https://x.y)", "a", " ", "b_c", "<", "&", "\n", "> ", "# ", "- "];
    let seed = 3;
    for (let round = 0; round < 500; round++) {
      let md = "";
      for (let k = 0; k < 25; k++) md += pieces[(seed = (seed * 48271) % 2147483647) % pieces.length];
      const problems = telegramHtmlProblems(toHtml(md));
      if (problems.length) throw new Error(`${JSON.stringify(md)} → ${toHtml(md)}: ${problems.join("; ")}`);
    }
  });
});

describe("stripMarkdown", () => {
  it("gives readable plain text without markers and without escaping", () => {
    const md = [
      "# Plan",
      "**Bold** and *italic* and ~~gone~~ and `code <x>` & more",
      "- item with [a link](https://x.dev)",
      "> quoted",
      "```sh",
      "echo **raw**",
      "```",
      "snake_case stays",
    ].join("\n");
    expect(stripMarkdown(md)).toBe(
      [
        "Plan",
        "Bold and italic and gone and code <x> & more",
        "• item with a link (https://x.dev)",
        "> quoted",
        "echo **raw**",
        "snake_case stays",
      ].join("\n"),
    );
  });
});
