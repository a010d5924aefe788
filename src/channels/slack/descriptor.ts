// Slack as Hearth knows it: the `channels.slack` section (its group rules are "channels": Slack
// channel ids), what a bot can do there, its ids, and how setup and doctor reach it. Slack needs
// two secrets: the bot token (xoxb-, the Web API) and the app-level token (xapp-, Socket Mode, so
// no public URL is needed). The adapter (channel.ts, on @slack/bolt) loads only when it runs.
import type { z } from "zod";
import { httpUrl, secret, strict } from "../../fields/config-fields.ts";
import { toVariable } from "../../fields/secret-fields.ts";
import { accessOf, accessRows, accessShape, accessTemplate, type IdRule } from "../access-config.ts";
import type { ChannelDescriptor } from "../descriptor.ts";
import { checkSlackTokens, slackAppTokenProblem, slackBotTokenProblem, slackCodeRequest, SLACK_API, SLACK_STEPS } from "./setup.ts";

/** Slack's ids: users U…/W…, channels C…, private channels G…, DMs D…; upper-case letters and digits. */
const SLACK_IDS: IdRule = { platform: "Slack", pattern: /^[A-Z0-9]{2,}$/, looks: "upper-case letters and digits, like U0123ABCD" };

const schema = strict({
  token: secret(toVariable("SLACK_BOT_TOKEN")).optional(),
  appToken: secret(toVariable("SLACK_APP_TOKEN")).optional(),
  apiUrl: httpUrl.default(SLACK_API),
  ...accessShape(SLACK_IDS, "channels"),
});

export type SlackConfig = z.output<typeof schema>;

export const slack: ChannelDescriptor<SlackConfig, "slack"> = {
  id: "slack",
  name: "Slack",
  // 4,000: the length Slack asks messages to stay within (longer ones are truncated at 40,000).
  capabilities: { edits: true, buttons: true, reactions: true, threads: true, filesIn: true, filesOut: true, voiceIn: true, voiceOut: true, maxMessageLength: 4000, groups: true, strangers: true },
  config: {
    schema,
    template: `"token": "<bot token>",              // xoxb-…, or set SLACK_BOT_TOKEN
"appToken": "<app-level token>",     // xapp-… (Socket Mode), or set SLACK_APP_TOKEN
"apiUrl": "${SLACK_API}",
${accessTemplate("channels", "<channel id>", true)}`,
    rows: [
      { key: "channels.slack.token", default: "—", meaning: "the bot token (`xoxb-…`), or `SLACK_BOT_TOKEN`" },
      { key: "channels.slack.appToken", default: "—", meaning: "the app-level token (`xapp-…`, Socket Mode), or `SLACK_APP_TOKEN`" },
      { key: "channels.slack.apiUrl", default: `\`${SLACK_API}\``, meaning: "another Slack Web API address (a proxy)" },
      ...accessRows("slack", "channels", "Slack channels (ids)"),
    ],
  },
  packages: ["@slack/bolt@5.1.0"],
  credentials: [
    { variable: "SLACK_BOT_TOKEN", key: "token", source: "your app's OAuth & Permissions → Bot User OAuth Token", shapeProblem: slackBotTokenProblem },
    { variable: "SLACK_APP_TOKEN", key: "appToken", source: "your app's Basic Information → App-Level Tokens (connections:write)", shapeProblem: slackAppTokenProblem },
  ],
  access: (c) => accessOf(c, "channels"),
  groupsKey: "channels",
  // A user id names the bot's DM with that person (Slack posts there); C… and G… are channels; a
  // D… id does not say whose DM it is.
  chats: { label: "<channelId>", pattern: /^[A-Z0-9]{2,}$/, kind: (id) => (/^[UW]/.test(id) ? "person" : /^[CG]/.test(id) ? "group" : "unknown") },
  ownerIdHint: "your profile → ⋮ → Copy member ID",
  async checkOnline(c) {
    const r = await checkSlackTokens(c.token ?? "", c.appToken ?? "", c.apiUrl);
    return r.ok ? { ok: true, detail: `the bot is @${r.botName}; Socket Mode lets the app in` } : { ok: false, detail: r.problem };
  },
  setup: {
    offer: "Connect a Slack app?",
    offerDefault: false,
    steps: SLACK_STEPS,
    tokenPrompt: "Slack bot token (xoxb-…, OAuth & Permissions → Bot User OAuth Token)",
    dm: "direct message",
    botHandle: (name) => `@${name}`,
    apiKey: "apiUrl",
    apiFlag: "slack-api-url",
    defaultApi: SLACK_API,
    checkToken: (token, api, more) => checkSlackTokens(token, more?.SLACK_APP_TOKEN ?? "", api),
    codeRequest: slackCodeRequest,
    async findOwner(token, api, o) {
      const { awaitSlackOwner } = await import("./handshake.ts");
      return awaitSlackOwner(token, o.more?.SLACK_APP_TOKEN ?? "", api, o);
    },
  },
  async create(c, deps) {
    const { createSlackChannel } = await import("./channel.ts");
    return createSlackChannel({ botToken: c.token ?? "", appToken: c.appToken ?? "", apiUrl: c.apiUrl, ownerIds: c.ownerIds, namePattern: c.namePattern }, { log: deps.log });
  },
};
