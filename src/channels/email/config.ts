// The `channels.email` section of config.json: apart from descriptor.ts, which loads the adapter
// (channel.ts) and doctor's check (check.ts), so that both can take the section's type from here.
import { z } from "zod";
import { queueModes, secret, strict } from "../../fields/config-fields.ts";
import { toVariable } from "../../fields/secret-fields.ts";
import { dmRateLimit, maxPendingPairings } from "../access-config.ts";
import { PROVIDER_IDS } from "./presets.ts";
import { EMAIL_ADDRESS } from "./servers.ts";

const address = z
  .string()
  .trim()
  .toLowerCase()
  .regex(EMAIL_ADDRESS, { error: "expected an email address (name@example.org)" });

const server = {
  host: z.string().trim().min(1).optional(),
  port: z.int().min(1).max(65_535).optional(),
  secure: z.boolean().optional(),
  /** The login, when it is not `address`. */
  user: z.string().trim().min(1).optional(),
};

export const schema = strict({
  provider: z.enum(PROVIDER_IDS).nullable().default(null),
  /** The mailbox Hearth reads and the address it answers from; without it the channel does not start (doctor says so). */
  address: address.optional(),
  /** Optional here: it may come from EMAIL_PASSWORD; without one the channel is not started. */
  password: secret(toVariable("EMAIL_PASSWORD")).optional(),
  imap: strict({ ...server, folder: z.string().trim().min(1).default("INBOX") }).prefault({}),
  smtp: strict(server).prefault({}),
  authservId: z.string().trim().min(1).nullable().default(null),
  ownerAddresses: z.array(address).default([]),
  // Mail is the easiest place to write from anywhere: by default nobody but the owner is read.
  dmPolicy: z.enum(["pairing", "allowlist", "disabled"]).default("disabled"),
  maxPendingPairings,
  allowFrom: z.array(address).default([]),
  dmRateLimit,
  queueMode: z.enum(queueModes).nullable().default(null),
});

export type EmailConfig = z.output<typeof schema>;
