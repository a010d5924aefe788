import { describe, expect, it } from "vitest";
import { printable } from "../../src/channels/printable.ts";

describe("printable", () => {
  it("replaces ESC, BEL, C1 controls, line breaks and direction overrides with U+FFFD, one for one", () => {
    expect(printable("Eve\x1b[8m 42\x1b[0m\x1b]0;title\x07\u009b2J a\nb\r\tc\u202ecba\u2066x\u2069\u0000\u007f")).toBe(
      "Eve\ufffd[8m 42\ufffd[0m\ufffd]0;title\ufffd\ufffd2J a\ufffdb\ufffd\ufffdc\ufffdcba\ufffdx\ufffd\ufffd\ufffd",
    );
  });

  it("keeps every printable character: accents, CJK, emoji with joiners", () => {
    const name = "Zoë 张伟 👩‍👩‍👧 O'Brien-Smith";
    expect(printable(name)).toBe(name);
  });
});
