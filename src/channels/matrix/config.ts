// The `channels.matrix` section of config.json: apart from descriptor.ts, which loads the adapter
// (channel.ts), so that the adapter can take the section's type from here.
import { z } from "zod";
import { httpUrl, secret, strict } from "../../fields/config-fields.ts";
import { toVariable } from "../../fields/secret-fields.ts";
import { accessShape, type IdRule } from "../access-config.ts";

export const HOMESERVER = "https://matrix.org";

/** A user id (`@ann:example.org`) or, in the rooms list, a room id (`!abc:example.org`). */
const matrixIds: IdRule = { platform: "Matrix", pattern: /^[@!][^:\s]+:[^\s]+$/, looks: "@user:server for people, !room:server for rooms" };

export const schema = strict({
  homeserverUrl: httpUrl.default(HOMESERVER),
  /** The bot's user id; asked of the homeserver (whoami) when absent. */
  userId: z.string().regex(/^@[^:\s]+:[^\s]+$/, "a Matrix user id such as @hearth:example.org").nullable().default(null),
  accessToken: secret(toVariable("MATRIX_ACCESS_TOKEN")).optional(),
  /** End-to-end encryption (Element makes every DM encrypted): the Rust crypto, its store kept in the home (crypto-store.ts). */
  encryption: z.boolean().default(true),
  ...accessShape(matrixIds, "rooms"),
});

export type MatrixConfig = z.output<typeof schema>;
