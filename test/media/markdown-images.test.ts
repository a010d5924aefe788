import { describe, expect, it } from "vitest";
import { findImageRefs, isUrl, pendingRefStart, removeRefs, targetPath } from "../../src/media/markdown-images.ts";

describe("markdown image references", () => {
  it("finds ![alt](target), with a title or an <angle-bracket> path, outside code only", () => {
    const text = ["![a](x.png)", '![b](y.png "Title")', "![c](<my pic.png>)", "```", "![d](code.png)", "```", "`![e](span.png)` ![f](z.png)"].join("\n");
    expect(findImageRefs(text).map((r) => [r.alt, r.target])).toEqual([
      ["a", "x.png"],
      ["b", "y.png"],
      ["c", "my pic.png"],
      ["f", "z.png"],
    ]);
    expect(findImageRefs("```\n![open](fence.png)\nnever closed")).toEqual([]);
  });

  it("a URL of any scheme, or protocol-relative, is a URL; percent-escapes in paths are decoded", () => {
    expect(["https://a/b.png", "http://a", "data:image/png;base64,AA", "file:///etc/passwd", "//cdn/x.png"].map(isUrl)).toEqual([true, true, true, true, true]);
    expect(isUrl("out/chart.png")).toBe(false);
    expect(targetPath("my%20pic.png")).toBe("my pic.png");
    expect(targetPath("100%.png")).toBe("100%.png");
  });

  it("removes a reference alone on its line with the line, an inline one with one space; blank runs shrink to one", () => {
    const text = "Here:\n\n![a](a.png)\n\nSee ![b](b.png) here, and ![c](c.png).\n![d](d.png) first";
    const refs = findImageRefs(text);
    expect(removeRefs(text, refs)).toBe("Here:\n\nSee here, and.\nfirst");
    expect(removeRefs(text, [])).toBe(text);
  });

  it("while streaming, holds back a reference not complete yet, but not one in code or a finished one", () => {
    expect(pendingRefStart("Look ![cha")).toBe(5);
    expect(pendingRefStart("Look ![chart](out/ch")).toBe(5);
    expect(pendingRefStart("Look ![chart](out/chart.png)")).toBe(28);
    expect(pendingRefStart("Look ![x\nnext line")).toBe(18);
    expect(pendingRefStart("```\n![x](y")).toBe(10);
    expect(pendingRefStart("no image")).toBe(8);
  });
});
