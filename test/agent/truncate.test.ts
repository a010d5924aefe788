import { describe, expect, it } from "vitest";
import { truncateMiddle } from "../../src/agent/truncate.ts";
import { announcesAction } from "../../src/agent/loop.ts";

describe("truncateMiddle", () => {
  it("keeps short text unchanged", () => {
    expect(truncateMiddle("abc", 10)).toBe("abc");
  });

  it("keeps head and tail within the limit and says how much was cut", () => {
    const text = `HEAD${"x".repeat(100_000)}TAIL`;
    const out = truncateMiddle(text, 30_000);
    expect(out.length).toBeLessThanOrEqual(30_000);
    expect(out.startsWith("HEAD")).toBe(true);
    expect(out.endsWith("TAIL")).toBe(true);
    expect(out).toMatch(/\[… [\d,]+ characters cut …\]/);
  });
});

describe("announcesAction", () => {
  it.each(["Let me check the logs.", "Sure. I'm going to run the tests now.", "Here is what I'll run:"])("flags %j", (t) => {
    expect(announcesAction(t)).toBe(true);
  });
  it.each(["Done. I'll remind you tomorrow.", "The file has 3 lines.", "Should I let me… no. Want me to check?", ""])("does not flag %j", (t) => {
    expect(announcesAction(t)).toBe(false);
  });
});
