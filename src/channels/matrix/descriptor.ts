// Matrix as Hearth knows it: the `channels.matrix` section (a bot account on any homeserver; its
// group rules are "rooms"), what a Matrix client can do, its ids, and how setup and doctor reach
// the homeserver. The adapter (channel.ts, matrix-js-sdk with its Rust crypto, installed into the
// home by setup) loads only when it runs.
import { accessOf, accessRows, accessTemplate } from "../access-config.ts";
import type { ChannelDescriptor } from "../descriptor.ts";
import { checkMatrixToken, matrixCodeRequest, matrixTokenProblem } from "./setup.ts";
import { HOMESERVER, schema, type MatrixConfig } from "./config.ts";

export type { MatrixConfig };

export const matrix: ChannelDescriptor<MatrixConfig, "matrix"> = {
  id: "matrix",
  name: "Matrix",
  capabilities: { edits: true, buttons: true, reactions: false, threads: true, filesIn: true, filesOut: true, voiceIn: true, voiceOut: true, maxMessageLength: 16_000, groups: true, strangers: true },
  config: {
    schema,
    template: `"homeserverUrl": "${HOMESERVER}",   // the bot account's homeserver
"userId": null,                      // the bot's user id, e.g. "@hearth:example.org" (null: asked of the homeserver)
"accessToken": "<access token>",     // or set MATRIX_ACCESS_TOKEN
"encryption": true,                  // answer in end-to-end encrypted rooms
${accessTemplate("rooms", "<room id, e.g. !abcdef:example.org>", true)}`,
    rows: [
      { key: "channels.matrix.homeserverUrl", default: `\`${HOMESERVER}\``, meaning: "the bot account's homeserver" },
      { key: "channels.matrix.userId", default: "`null`", meaning: "the bot's user id (`@hearth:example.org`); asked of the homeserver when absent" },
      { key: "channels.matrix.accessToken", default: "—", meaning: "or `MATRIX_ACCESS_TOKEN`" },
      { key: "channels.matrix.encryption", default: "`true`", meaning: "answer in end-to-end encrypted rooms (the device's keys are kept in the home, `secrets.matrix-crypto.json`)" },
      ...accessRows("matrix", "rooms", "rooms (ids, `!abc:example.org`)"),
    ],
  },
  packages: ["matrix-js-sdk@43.0.0", "@matrix-org/matrix-sdk-crypto-wasm@18.9.0", "fake-indexeddb@6.2.8"],
  credentials: [{ variable: "MATRIX_ACCESS_TOKEN", key: "accessToken", source: "the bot account's access token (Element: Settings → Help & About)", shapeProblem: matrixTokenProblem }],
  access: (c) => accessOf(c, "rooms"),
  groupsKey: "rooms",
  // A room id does not say whether it is a direct chat: only a listed one counts as a group.
  chats: { label: "<roomId>", pattern: /^![^:\s]+:[^\s]+$/, kind: () => "unknown" },
  ownerIdHint: "your Matrix id, e.g. @ann:example.org (Element: Settings → Account)",
  async checkOnline(c) {
    const r = await checkMatrixToken(c.accessToken ?? "", c.homeserverUrl);
    return r.ok ? { ok: true, detail: `the bot is ${r.botName}` } : { ok: false, detail: r.problem };
  },
  setup: {
    offer: "Connect a Matrix bot account?",
    offerDefault: false,
    tokenPrompt: "Matrix access token of the bot account",
    dm: "direct chat",
    botHandle: (name) => name,
    apiKey: "homeserverUrl",
    apiFlag: "matrix-homeserver",
    defaultApi: HOMESERVER,
    checkToken: checkMatrixToken,
    codeRequest: matrixCodeRequest,
    async findOwner(token, api, o) {
      const { awaitMatrixOwner } = await import("./handshake.ts");
      return awaitMatrixOwner(token, api, o);
    },
  },
  async create(c, deps) {
    const { createMatrixChannel } = await import("./channel.ts");
    return createMatrixChannel(c, deps);
  },
};
