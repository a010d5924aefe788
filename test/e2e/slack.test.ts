// Slack end to end: the daemon on @slack/bolt in Socket Mode against the fake Slack. An approval
// button pressed by a channel member changes nothing and the owner's press runs the command once,
// the question then saying who decided; an event Slack delivers again (its ack was late) is
// answered once; a thread is answered in the thread; answers are Slack mrkdwn, 👀 shows while
// one is written, a 429 is waited out as Slack says, a voice clip is transcribed; `hearth doctor
// --online` tries both tokens.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startFakeSlack, type FakeSlack, type FakeSlackUser } from "../support/fake-slack.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";

let model: FakeModel;
let stt: FakeTranscription;
let slack: FakeSlack;
let d: Daemon;
let home: string;
let owner: FakeSlackUser;
let member: FakeSlackUser;
let dm: string;
let general: string;

const settled = () => waitFor("every accepted message's outcome recorded", () => inboxSettled(home));

beforeAll(async () => {
  model = await startFakeModel();
  slack = await startFakeSlack();
  stt = await startFakeTranscription();
  owner = slack.addUser("owner");
  member = slack.addUser("mia");
  dm = slack.dmChannel(owner);
  general = slack.addChannel("general");
  home = makeHome({
    channels: { slack: { apiUrl: slack.apiUrl, ownerIds: [owner.id], channels: { policy: "allowlist", allow: [general], requireMention: true } } },
    approvals: { exec: "always" },
    heartbeat: { every: "0" },
    media: { transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1" } },
  });
  d = await startDaemon(home, { SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  await slack.waitFor("the app connected", () => slack.connected());
});
afterAll(async () => {
  await cleanupDaemon(d, home);
  await slack.close();
  await stt.close();
  await model.close();
});

describe("Slack", () => {
  it("an approval pressed by a channel member changes nothing; the owner's press runs the command once and the question says who decided", async () => {
    const file = join(home, "workspace", "slack-once.txt");
    model.enqueue(toolCall("exec", { command: "echo ran >> slack-once.txt" }), text("Done: it ran once."));
    slack.postMessage({ channel: dm, user: owner, text: "please run it" });
    const q = await slack.waitFor("the question", () => slack.botMessages(dm).find((m) => m.buttons.length > 0));
    const asked = q.text;
    expect(asked.startsWith("🔐 Approve this?\nexec: echo ran >> slack-once.txt")).toBe(true);
    expect(q.buttons.map((b) => b.label)).toEqual(["Allow once", "Allow for 30 min", "Always", "Deny"]);

    slack.pressButton(q.ts, "Allow once", member);
    const toMember = await slack.waitFor("the answer to the member", () => slack.ephemerals.find((e) => e.user === member.id));
    expect(toMember.text).toBe("Only the owner can approve.");
    expect(existsSync(file)).toBe(false);
    expect(slack.message(q.ts)!.buttons).toHaveLength(4);

    slack.pressButton(q.ts, "Allow once", owner);
    await slack.waitFor("the final answer", () => slack.botMessages(dm).find((m) => m.text === "Done: it ran once."));
    await settled();
    expect(slack.ephemerals.find((e) => e.user === owner.id)?.text).toBe("Allowed.");
    expect(slack.message(q.ts)!.text).toBe(`${asked}\n\n✅ Allowed once by owner.`);
    expect(slack.message(q.ts)!.buttons).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe("ran\n");
    expect(slack.botMessages(dm).filter((m) => m.text === "Done: it ran once.")).toHaveLength(1);
  });

  it("an event Slack delivers again (its ack was late) is answered once, with one model call", async () => {
    const requests = model.requests.length;
    model.enqueue(text("Answered once, however often Slack asks.", { headDelayMs: 300 }));
    const sent = slack.postMessage({ channel: dm, user: owner, text: "are you there?" });
    // Redelivered while the first delivery is being handled, and once more after the answer.
    slack.redeliver(sent.envelopeId);
    await slack.waitFor("the answer", () => slack.botMessages(dm).find((m) => m.text === "Answered once, however often Slack asks."));
    slack.redeliver(sent.envelopeId);
    await slack.waitFor("every delivery acked", () => slack.acks.filter((a) => a === sent.envelopeId).length === 3);
    await settled();
    expect(slack.deliveries(sent.envelopeId)).toBe(3);
    expect(slack.botMessages(dm).filter((m) => m.text === "Answered once, however often Slack asks.")).toHaveLength(1);
    expect(model.requests).toHaveLength(requests + 1);
  });

  it("a channel thread is its own conversation: a mention there is answered in the thread, with 👀 while it is written", async () => {
    model.enqueue(text("Answered in the thread.", { headDelayMs: 400 }));
    const parent = slack.postMessage({ channel: general, user: member, text: "a thread about lunch" });
    const asked = slack.postMessage({ channel: general, user: member, text: "what do you think?", threadTs: parent.ts, mention: true });
    await slack.waitFor("👀 on the question", () => slack.calls.find((c) => c.method === "reactions.add" && c.args.timestamp === asked.ts && c.args.name === "eyes"));
    const answer = await slack.waitFor("the answer", () => slack.botMessages(general).find((m) => m.text === "Answered in the thread."));
    await settled();
    expect(answer.threadTs).toBe(parent.ts);
    expect(slack.calls.filter((c) => c.method === "reactions.remove" && c.args.timestamp === asked.ts)).toHaveLength(1);
  });

  it("answers are Slack mrkdwn (bold, links, code blocks); a 429 is waited out for as long as Retry-After says", async () => {
    // The answer's first message is a placeholder; the final text is its edit.
    slack.injectFailure({ method: "chat.update", kind: "rate_limited", retryAfterSeconds: 1, when: (a) => String(a.text).includes("*bold*") });
    model.enqueue(text("Some **bold**, a [link](https://example.com/a?b=1&c=2) and 1 < 2:\n\n```ts\nconst x = a && b;\n```"));
    slack.postMessage({ channel: dm, user: owner, text: "format something" });
    const m = await slack.waitFor("the formatted answer", () => slack.botMessages(dm).find((x) => x.text.startsWith("Some *bold*")));
    await settled();
    expect(m.text).toBe("Some *bold*, a <https://example.com/a?b=1&c=2|link> and 1 < 2:\n\n```\nconst x = a && b;\n```");
    const posts = slack.calls.filter((c) => c.method.startsWith("chat.") && String(c.args.text).includes("*bold*"));
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(1000);
    // Slack's entities go escaped on the wire.
    expect(posts[1]!.args.text).toContain("1 &lt; 2");
  });

  it("a voice clip is fetched from url_private with the bot token and transcribed like a voice note", async () => {
    stt.enqueue({ text: "Remind me to water the plants." });
    model.enqueue(text("Noted."));
    const requests = model.requests.length;
    const clip = new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 1, 2, 3, 4]);
    slack.postMessage({ channel: dm, user: owner, text: "", files: [{ name: "audio_message.webm", mime: "audio/webm", bytes: clip, subtype: "slack_audio", durationMs: 2400 }] });
    await slack.waitFor("the answer", () => slack.botMessages(dm).find((m) => m.text === "Noted."));
    await settled();
    expect(Buffer.from(stt.requests.at(-1)!.file).equals(Buffer.from(clip))).toBe(true);
    expect(String(lastUserContent(model.requests[requests]!)[0]!.text).split("\n").at(-1)).toBe("[voice note, transcribed] Remind me to water the plants.");
    expect(slack.botMessages(dm).some((m) => m.text === "🎤 heard: Remind me to water the plants.")).toBe(true);
  });

  it("hearth doctor --online tries both tokens: auth.test for the bot token, apps.connections.open for the app token", async () => {
    const env = (app: string) => isolatedEnv({ HEARTH_HOME: home, SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: app, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
    const good = await runHearth(["doctor", "--online"], env(slack.appToken), { timeoutMs: 40_000 });
    expect(good.stdout).toContain("✓ slack online: the bot is @hearth; Socket Mode lets the app in");
    const bad = await runHearth(["doctor", "--online"], env("xapp-1-not-the-right-one"), { timeoutMs: 40_000 });
    expect(bad.stdout).toContain("✗ slack online: Slack refused apps.connections.open (invalid_auth); check that Socket Mode is on and the token has connections:write");
    expect(bad.stdout).not.toContain("xapp-1-not-the-right-one");
  });
});
