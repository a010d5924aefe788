// How a Slack reply is sent: the final text in mrkdwn, previews escaped as they are, and the
// same final text once more as plain words when Slack refuses the formatted one.
import { describe, expect, it } from "vitest";
import { slackTransport, type SlackWeb } from "../../../src/channels/slack/reply.ts";

function fakeWeb(refuse: string | null) {
  const calls: Array<{ method: string; text: string; thread_ts?: string }> = [];
  let refusals = refuse ? 1 : 0;
  const answer = async (method: string, a: { text: string; thread_ts?: string }) => {
    calls.push({ method, text: a.text, ...(a.thread_ts ? { thread_ts: a.thread_ts } : {}) });
    if (refusals-- > 0) throw Object.assign(new Error(`An API error occurred: ${refuse}`), { code: "slack_webapi_platform_error", data: { ok: false, error: refuse } });
    return { ts: `${calls.length}.0` };
  };
  const web = {
    chat: { postMessage: (a: { text: string }) => answer("postMessage", a), update: (a: { text: string }) => answer("update", a), delete: async () => ({}), postEphemeral: async () => ({}) },
    reactions: { add: async () => ({}), remove: async () => ({}) },
  } as unknown as SlackWeb;
  return { web, calls };
}

describe("the Slack reply transport", () => {
  it("sends previews escaped as they are and the final text as mrkdwn, in the thread", async () => {
    const { web, calls } = fakeWeb(null);
    const t = slackTransport(() => web, { channel: "C1", threadTs: "9.0" });
    const id = await t.send("**half** <b", { final: false });
    await t.edit(id, "**done** <b>", { final: true });
    expect(calls).toEqual([
      { method: "postMessage", text: "**half** &lt;b", thread_ts: "9.0" },
      { method: "update", text: "*done* &lt;b&gt;" },
    ]);
  });

  it("a final text Slack refuses goes once more as plain words; a refused preview is not retried", async () => {
    const refused = fakeWeb("msg_too_long");
    await slackTransport(() => refused.web, { channel: "D1" }).send("See **this** [page](https://example.com)", { final: true });
    expect(refused.calls.map((c) => c.text)).toEqual(["See *this* <https://example.com|page>", "See this page (https://example.com)"]);

    const preview = fakeWeb("msg_too_long");
    await expect(slackTransport(() => preview.web, { channel: "D1" }).send("partial", { final: false })).rejects.toThrow("msg_too_long");
    expect(preview.calls).toHaveLength(1);
  });
});
