// The linear passes over untrusted HTML: the depth check that guards the DOM, and the plain-text
// fallback a page past the limits gets.
import { describe, expect, it } from "vitest";
import { nestingDepth, stripTags } from "../../src/parse/html-scan.ts";

const nested = (d: number) => `${"<div>".repeat(d)}<p>The bottom of the page.</p>${"</div>".repeat(d)}`;

describe("nestingDepth", () => {
  it("counts open elements; void, self-closed, comments and raw-text elements add no level", () => {
    expect(nestingDepth("<html><body><p>a</p><p>b</p></body></html>", 100)).toBe(3);
    expect(nestingDepth("<div><br><img src=x><input/><!-- <div><div> --><script>if (a<b) '<div><div><div>'</script></div>", 100)).toBe(1);
    expect(nestingDepth("<DIV><Div><SCRIPT>'</div></div>'</Script></div></div>", 100)).toBe(2);
  });

  it("unclosed tags count as open, and the count stops just past the limit", () => {
    expect(nestingDepth("<div>".repeat(10), 100)).toBe(10);
    expect(nestingDepth(nested(200_000), 256)).toBe(257);
    expect(nestingDepth(nested(256), 256)).toBe(257); // the <p> inside is level 257
  });
});

describe("stripTags", () => {
  it("keeps the words, drops markup and script, breaks lines at blocks and decodes entities", () => {
    const html = `<html><head><title>T</title><style>p{}</style><script>var a = "<p>x</p>"</script></head><body>${nested(3)}<p>Hello &amp; <b>bo</b>ld   world<br>next &#x263A; &lt;3</p><table><tr><td>a</td><td>b</td></tr></table></body></html>`;
    expect(stripTags(html, 1000)).toEqual({ text: "The bottom of the page.\nHello & bold world\nnext ☺ <3\na b", cut: false });
  });

  it("stops at maxChars and says it cut", () => {
    expect(stripTags("<p>abc def ghi jkl</p>", 7)).toEqual({ text: "abc def", cut: true });
    expect(stripTags(`${"<div>".repeat(200_000)}x`, 10)).toEqual({ text: "x", cut: false });
  });
});
