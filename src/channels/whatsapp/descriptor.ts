// WhatsApp as Hearth knows it: the `channels.whatsapp` section, what a linked device can do
// (no buttons for personal accounts, edits too limited to stream), its ids, and how the adapter
// is made. The adapter (channel.ts) and the library behind its socket interface (baileys.ts,
// @whiskeysockets/baileys) load only when it runs.
import { z } from "zod";
import { strict } from "../../fields/config-fields.ts";
import { accessOf, accessRows, accessShape, accessTemplate, type IdRule } from "../access-config.ts";
import type { ChannelDescriptor } from "../descriptor.ts";

/** A person (a phone number, with or without +) or a group (its JID, `…@g.us`). */
const WHATSAPP_IDS: IdRule = {
  platform: "WhatsApp",
  pattern: /^(?:\+?[1-9]\d{4,14}|\d+(?:-\d+)?@g\.us)$/,
  looks: "a phone number such as +4915112345678, or a group id ending in @g.us",
};

const schema = strict({
  /** Link by an 8-character code for this number (Linked devices → Link with phone number) rather than a QR code. */
  pairingNumber: z
    .string()
    .regex(/^\+?[1-9]\d{5,14}$/, "expected the number Hearth links to, e.g. +4915112345678")
    .nullable()
    .default(null),
  ...accessShape(WHATSAPP_IDS, "groups"),
});

export type WhatsAppConfig = z.output<typeof schema>;

const plus = (ids: string[]) => ids.map((id) => id.replace(/^\+/, ""));

export const whatsapp: ChannelDescriptor<WhatsAppConfig, "whatsapp"> = {
  id: "whatsapp",
  name: "WhatsApp",
  capabilities: { edits: false, buttons: false, reactions: false, threads: false, filesIn: true, filesOut: true, voiceIn: true, voiceOut: true, maxMessageLength: 4000, groups: true, strangers: true },
  config: {
    schema,
    template: `"pairingNumber": null,               // link by a pairing code for this number (e.g. "+4915112345678"); null: a QR code
${accessTemplate("groups", "<group id, e.g. 120363012345678901@g.us>", true)}`,
    rows: [
      { key: "channels.whatsapp.pairingNumber", default: "`null`", meaning: "link with an 8-character pairing code for this number instead of a QR code" },
      ...accessRows("whatsapp", "groups", "groups (ids ending in `@g.us`)"),
    ],
  },
  packages: ["@whiskeysockets/baileys@7.0.0-rc14"],
  access: (c) => accessOf({ ...c, ownerIds: plus(c.ownerIds), allowFrom: plus(c.allowFrom) }, "groups"),
  groupsKey: "groups",
  chats: { label: "<number or groupId>", pattern: WHATSAPP_IDS.pattern, kind: (chatId) => (chatId.endsWith("@g.us") ? "group" : "person") },
  ownerIdHint: "your own phone number in international form, e.g. +4915112345678",
  linkSetup: {
    offer: "Connect WhatsApp (Hearth as a linked device of its own number)?",
    offerDefault: false,
    flags: [
      { name: "link", value: "qr|code" },
      { name: "number", value: "NUMBER" },
      { name: "owner", value: "NUMBER" },
    ],
    async run(ui, home, waitMs) {
      const { linkWhatsApp } = await import("./link.ts");
      return linkWhatsApp(ui, home, waitMs);
    },
  },
  async create(c, deps) {
    const [{ createWhatsAppChannel }, { openAuthStore }, { loadConnector }] = await Promise.all([import("./channel.ts"), import("./auth-store.ts"), import("./connector.ts")]);
    const connect = await loadConnector();
    return createWhatsAppChannel(
      { ownerIds: plus(c.ownerIds), namePattern: c.namePattern, pairingNumber: c.pairingNumber ? c.pairingNumber.replace(/^\+/, "") : null },
      { log: deps.log, connect, store: openAuthStore(deps.home), tellOwner: deps.tellOwner },
    );
  },
};
