// Hearth's markdown as Slack shows it: mrkdwn for answers, plain words when Slack refuses that,
// and Slack's three entities escaped everywhere (or `<!channel>` in an answer would ping everyone).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { markdownToMrkdwn, markdownToPlain } from "../../../src/channels/slack/mrkdwn.ts";
import { SLACK_MANIFEST } from "../../../src/channels/slack/setup.ts";

describe("Slack mrkdwn", () => {
  it("turns bold, italic, strike, links, headings and bullets into Slack's markers", () => {
    expect(markdownToMrkdwn("**bold**, *italic*, ~~gone~~ and [the docs](https://example.com/x?a=1&b=2)")).toBe("*bold*, _italic_, ~gone~ and <https://example.com/x?a=1&b=2|the docs>");
    expect(markdownToMrkdwn("## Plan\n- one\n- two")).toBe("*Plan*\n• one\n• two");
  });

  it("keeps code as it is, without the fence's language, escaped", () => {
    expect(markdownToMrkdwn("Run `a **b** <c>`:\n\n```sh\nif [ 1 < 2 ] && true; then **x**; fi\n```")).toBe("Run `a **b** &lt;c&gt;`:\n\n```\nif [ 1 &lt; 2 ] &amp;&amp; true; then **x**; fi\n```");
  });

  it("escapes Slack's markup in text, so an answer never pings anyone", () => {
    expect(markdownToMrkdwn("say <!channel> & <@U123>")).toBe("say &lt;!channel&gt; &amp; &lt;@U123&gt;");
  });

  it("leaves what does not clearly open and close alone: snake_case, 2*3*4", () => {
    expect(markdownToMrkdwn("snake_case_name and 2*3*4")).toBe("snake_case_name and 2*3*4");
  });

  it("the plain fallback has no markers, link targets after their text", () => {
    expect(markdownToPlain("**Note**: see [the docs](https://example.com) & go")).toBe("Note: see the docs (https://example.com) &amp; go");
  });

  it("the manifest of docs/channels/slack.md is the one setup shows", () => {
    const page = readFileSync(path.resolve(import.meta.dirname, "../../../docs/channels/slack.md"), "utf8");
    const block = /## Connecting[\s\S]*?```json\n([\s\S]*?)```/.exec(page)![1]!;
    expect(JSON.parse(block)).toEqual(JSON.parse(SLACK_MANIFEST));
  });
});
