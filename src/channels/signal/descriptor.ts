// Signal as Hearth knows it: the `channels.signal` section, what Signal can do through a running
// signal-cli (JSON-RPC over HTTP, linked as a device of a phone number), its ids, and how setup
// and doctor reach the daemon. The adapter (channel.ts) loads only when it runs; it needs no
// library beyond Node's fetch.
import { z } from "zod";
import { httpUrl, strict } from "../../fields/config-fields.ts";
import { accessOf, accessRows, accessShape, accessTemplate, type IdRule } from "../access-config.ts";
import type { ChannelDescriptor } from "../descriptor.ts";
import { isPersonChat } from "./inbound.ts";
import { checkSignalDaemon } from "./setup.ts";

const DAEMON = "http://127.0.0.1:8080";

/** A person (a phone number in E.164 form, or a Signal account's UUID) or a group (its base64 id). */
const SIGNAL_IDS: IdRule = {
  platform: "Signal",
  pattern: /^(?:\+?[1-9]\d{4,14}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z0-9+/]{20,}={0,2})$/,
  looks: "a phone number such as +4915112345678, a Signal account's UUID, or a group id (base64)",
};

const schema = strict({
  /** signal-cli's HTTP endpoint (`signal-cli -a +NUMBER daemon --http 127.0.0.1:8080`). */
  httpUrl: httpUrl.default(DAEMON),
  /** The number signal-cli is linked to (Hearth's own on Signal); null: as signal-cli's events name it. */
  account: z
    .string()
    .regex(/^\+[1-9]\d{5,14}$/, "expected the phone number signal-cli is linked to, in international form such as +4915112345678")
    .nullable()
    .default(null),
  ...accessShape(SIGNAL_IDS, "groups"),
});

export type SignalConfig = z.output<typeof schema>;

/** A number written without its "+" is read as the international number it is (Signal names people by "+4915…"). */
function withPlus(c: SignalConfig): SignalConfig {
  const plus = (ids: string[]) => ids.map((id) => (/^\d+$/.test(id) ? `+${id}` : id));
  return { ...c, ownerIds: plus(c.ownerIds), allowFrom: plus(c.allowFrom) };
}

export const signal: ChannelDescriptor<SignalConfig, "signal"> = {
  id: "signal",
  name: "Signal",
  // Streaming by edits, few of them: Signal's apps show only the first ten edits of a message
  // (reply.ts spaces them). No buttons, but the same by reactions: a question lists
  // an emoji per choice (✅ ⏳ ❌) and a reaction with one (or a reply of its number) answers it.
  capabilities: { edits: true, buttons: true, reactions: false, threads: false, filesIn: true, filesOut: true, voiceIn: true, voiceOut: true, maxMessageLength: 2000, groups: true, strangers: true },
  config: {
    schema,
    template: `"httpUrl": "${DAEMON}",   // signal-cli -a <number> daemon --http 127.0.0.1:8080 --receive-mode on-connection
"account": null,                     // the number signal-cli is linked to, e.g. "+4915112345678"; null: as signal-cli says
${accessTemplate("groups", "<group id (base64), from signal-cli listGroups>", true)}`,
    rows: [
      { key: "channels.signal.httpUrl", default: `\`${DAEMON}\``, meaning: "the HTTP address of the running `signal-cli daemon --http`" },
      { key: "channels.signal.account", default: "`null`", meaning: "the phone number signal-cli is linked to (`+4915112345678`); `null`: as signal-cli's events name it" },
      ...accessRows("signal", "groups", "groups (base64 group ids, from `signal-cli listGroups`)"),
    ],
  },
  access: (c) => accessOf(withPlus(c), "groups"),
  groupsKey: "groups",
  chats: { label: "<number or groupId>", pattern: SIGNAL_IDS.pattern, kind: (chatId) => (isPersonChat(chatId) ? "person" : "group") },
  ownerIdHint: "your own phone number in international form, e.g. +4915112345678",
  async checkOnline(c) {
    const r = await checkSignalDaemon(c.httpUrl);
    return r.ok ? { ok: true, detail: r.detail } : { ok: false, detail: r.problem, fix: `start it: signal-cli -a ${c.account ?? "+NUMBER"} daemon --http ${new URL(c.httpUrl).host} --receive-mode on-connection` };
  },
  linkSetup: {
    offer: "Connect Signal (through a running signal-cli)?",
    offerDefault: false,
    flags: [
      { name: "url", value: "URL" },
      { name: "account", value: "NUMBER|link" },
      { name: "owner", value: "NUMBER" },
    ],
    async run(ui, _home, waitMs) {
      const { linkSignal } = await import("./link.ts");
      return linkSignal(ui, waitMs);
    },
  },
  async create(c, deps) {
    const { createSignalChannel } = await import("./channel.ts");
    return createSignalChannel({ httpUrl: c.httpUrl, account: c.account, ownerIds: withPlus(c).ownerIds, namePattern: c.namePattern }, { log: deps.log });
  },
};
