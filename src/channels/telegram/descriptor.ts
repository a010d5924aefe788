// Telegram as Hearth knows it: the `channels.telegram` section, what the Bot API can do, its ids,
// and how setup and doctor reach it. The adapter (channel.ts, grammY) loads only when it runs.
import { z } from "zod";
import { httpUrl, reactionModes, secret, strict } from "../../fields/config-fields.ts";
import { toVariable } from "../../fields/secret-fields.ts";
import { accessOf, accessRows, accessShape, accessTemplate, digitIds } from "../access-config.ts";
import type { ChannelDescriptor } from "../descriptor.ts";
import { awaitTelegramOwner, checkTelegramToken, greetOwner, telegramCodeRequest, telegramTokenProblem } from "./setup.ts";

const API = "https://api.telegram.org";

const schema = strict({
  /** Optional here: it may come from TELEGRAM_BOT_TOKEN; without one the channel is not started. */
  token: secret(toVariable("TELEGRAM_BOT_TOKEN")).optional(),
  apiRoot: httpUrl.default(API),
  ...accessShape(digitIds("Telegram", true), "groups"),
  reactions: z.enum(reactionModes).default("private"),
});

export type TelegramConfig = z.output<typeof schema>;

export const telegram: ChannelDescriptor<TelegramConfig, "telegram"> = {
  id: "telegram",
  name: "Telegram",
  capabilities: { edits: true, buttons: true, reactions: true, threads: true, filesIn: true, filesOut: true, voiceIn: true, voiceOut: true, maxMessageLength: 4096, groups: true, strangers: true },
  config: {
    schema,
    template: `"token": "<token from @BotFather>",  // or set TELEGRAM_BOT_TOKEN
"apiRoot": "${API}", // change for a self-hosted Bot API server
${accessTemplate("groups", "<group chat id, e.g. -1001234567890>")}
"reactions": "private"               // 👀 on a message while it is answered: private (chats) | all | off`,
    rows: [
      { key: "channels.telegram.token", default: "—", meaning: "or `TELEGRAM_BOT_TOKEN`" },
      { key: "channels.telegram.apiRoot", default: `\`${API}\``, meaning: "a self-hosted Bot API server" },
      ...accessRows("telegram", "groups", "groups (chat ids, e.g. `-1001234567890`)"),
      {
        key: "channels.telegram.reactions",
        default: "`private`",
        meaning: "where a message shows 👀 while Hearth answers it (taken off once the answer is delivered): `private` (private chats), `all` (groups too), `off`",
      },
    ],
  },
  credentials: [{ variable: "TELEGRAM_BOT_TOKEN", key: "token", source: "from @BotFather", shapeProblem: telegramTokenProblem }],
  access: (c) => accessOf(c, "groups"),
  groupsKey: "groups",
  // A private chat's id is its user's id; groups have negative ids.
  chats: { label: "<chatId>", pattern: /^-?\d+$/, kind: (id) => (id.startsWith("-") ? "group" : "person") },
  ownerIdHint: "@userinfobot tells it",
  async checkOnline(c) {
    const r = await checkTelegramToken(c.token ?? "", c.apiRoot);
    return r.ok ? { ok: true, detail: `the bot is @${r.botName}` } : { ok: false, detail: r.problem };
  },
  setup: {
    offer: "Connect a Telegram bot?",
    offerDefault: true,
    tokenPrompt: "Telegram bot token (from @BotFather)",
    dm: "private message",
    botHandle: (name) => `@${name}`,
    apiKey: "apiRoot",
    apiFlag: "telegram-api-root",
    defaultApi: API,
    checkToken: checkTelegramToken,
    codeRequest: telegramCodeRequest,
    async findOwner(token, api, o) {
      try {
        const owner = await awaitTelegramOwner(token, api, { code: o.code, signal: AbortSignal.timeout(o.waitMs), ready: () => o.ready(o.botName), accept: o.accept, ignored: o.ignored });
        if (!owner) return { kind: "timeout" };
        await greetOwner(token, api, owner.id, o.greeting);
        return { kind: "owner", sender: owner };
      } catch (err) {
        return { kind: "failed", problem: `Telegram could not be asked for messages (${(err as Error).message})` };
      }
    },
  },
  async create(c, deps) {
    const { createTelegramChannel } = await import("./channel.ts");
    return createTelegramChannel({ ...c, commandMenus: deps.commandMenus }, { log: deps.log });
  },
};
