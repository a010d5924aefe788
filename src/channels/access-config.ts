// The part of a channel's config section every platform shares: who the owner is, who else may
// write privately, which groups, the rate limits, being named. One schema, one set of settings rows (docs/channels/<id>.md)
// and one template block, so that every platform says the same thing the same way; a descriptor
// adds its own keys (the token, the API address) around them.
import { z } from "zod";
import { duration, queueModes, strict } from "../fields/config-fields.ts";
import type { ChannelAccess, ConfigRow } from "./descriptor.ts";

/** How a platform writes its ids: its name (for messages) and the digits rule (Telegram's group ids are negative). */
export interface IdRule {
  platform: string;
  pattern: RegExp;
  /** What an id looks like, for the error ("a number or a string of digits"). */
  looks: string;
}

export const digitIds = (platform: string, signed = false): IdRule => ({ platform, pattern: signed ? /^-?\d+$/ : /^\d+$/, looks: "a number or a string of digits" });

/**
 * A platform id, given as a JSON number or a string, always a string in the output. Discord ids
 * are larger than 2^53: as JSON numbers they have already lost digits, so they must be strings.
 */
export function platformId(rule: IdRule) {
  return z
    .union([z.string(), z.number()], { error: `expected a ${rule.platform} id (${rule.looks})` })
    .transform((v, ctx) => {
      if (typeof v === "number") {
        if (Number.isSafeInteger(v)) return String(v);
        ctx.addIssue({
          code: "custom",
          message: `${v} is not an exact integer: write ${rule.platform} ids as strings, e.g. "1234567890123456789"`,
        });
        return z.NEVER;
      }
      const id = v.trim();
      if (rule.pattern.test(id)) return id;
      ctx.addIssue({ code: "custom", message: `"${v}" is not a ${rule.platform} id (${rule.looks}; ids, not names)` });
      return z.NEVER;
    });
}

export const idList = (rule: IdRule) => z.array(platformId(rule)).default([]);

export const dmPolicy = z.enum(["pairing", "allowlist", "disabled"]).default("pairing");
/** Pairing codes that may wait for approval at once on one channel (dmPolicy "pairing"). */
export const maxPendingPairings = z.number().int().min(1).max(100).default(3);

/** Addressed messages allowed per window in a shared scope; 0 means no limit. */
export const rateLimit = (perSender: number, perChat: number) =>
  strict({
    perSender: z.int().min(0).default(perSender),
    perChat: z.int().min(0).default(perChat),
    window: duration.default("1h"),
  }).prefault({});

/** Messages a paired person (shared DM) may send per window; 0 means no limit. */
export const dmRateLimit = strict({ perSender: z.int().min(0).default(30), window: duration.default("1h") }).prefault({});

export const groupRules = (rule: IdRule) =>
  strict({
    policy: z.enum(["allowlist", "open", "disabled"]).default("allowlist"),
    allow: idList(rule),
    requireMention: z.boolean().default(true),
    rateLimit: rateLimit(10, 30),
    /**
     * Groups (Discord: servers or channels) whose conversations may start background tasks
     * (spawn_task, task_status, cancel_task, /tasks), each seeing only its own; none by default.
     */
    tasks: idList(rule),
  }).prefault({});

export const namePattern = z
  .string()
  .nullable()
  .superRefine((source, ctx) => {
    if (source === null) return;
    if (source.trim() === "") {
      ctx.addIssue({ code: "custom", message: "an empty pattern would match every message; use null to turn it off" });
      return;
    }
    try {
      new RegExp(source, "i");
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `not a valid regular expression: ${(err as Error).message}` });
    }
  })
  .default(null);

/**
 * The shared keys of a section, with its group rules under `groupsKey` ("groups"; Discord says
 * "guilds"). Spread into the descriptor's own `strict({...})`.
 */
export function accessShape<K extends string>(rule: IdRule, groupsKey: K) {
  return {
    ownerIds: idList(rule),
    dmPolicy,
    maxPendingPairings,
    allowFrom: idList(rule),
    dmRateLimit,
    namePattern,
    queueMode: z.enum(queueModes).nullable().default(null),
    ...({ [groupsKey]: groupRules(rule) } as Record<K, ReturnType<typeof groupRules>>),
  };
}

type AccessSection = { ownerIds: string[]; dmPolicy: ChannelAccess["dmPolicy"]; allowFrom: string[]; dmRateLimit: ChannelAccess["dmRateLimit"]; queueMode: ChannelAccess["queueMode"] };

/** A section's access rules, its groups read under `groupsKey`. */
export function accessOf(section: AccessSection & Record<string, unknown>, groupsKey: string): ChannelAccess {
  return {
    ownerIds: section.ownerIds,
    dmPolicy: section.dmPolicy,
    allowFrom: section.allowFrom,
    groups: section[groupsKey] as ChannelAccess["groups"],
    dmRateLimit: section.dmRateLimit,
    queueMode: section.queueMode,
  };
}

/** The settings rows (docs/channels/<id>.md) of the shared keys of `channels.<id>`; `groups` names what a group id is on the platform. */
export function accessRows(id: string, groupsKey: string, groups: string): ConfigRow[] {
  const k = (key: string) => `channels.${id}.${key}`;
  return [
    { key: k("ownerIds"), default: "`[]`", meaning: "your user id(s): your private chat is the main conversation" },
    { key: k("dmPolicy"), default: "`pairing`", meaning: "others' private messages: `pairing` (you approve a code), `allowlist` or `disabled`" },
    { key: k("maxPendingPairings"), default: "`3`", meaning: "pairing codes that may wait for your approval at once" },
    { key: k("allowFrom"), default: "`[]`", meaning: "user ids that may write privately without pairing (never your private files)" },
    { key: k(groupsKey), default: '`{ "policy": "allowlist", "allow": [], "requireMention": true }`', meaning: `which ${groups} (\`allowlist\`, \`open\` or \`disabled\`), and whether a mention is needed` },
    { key: k(`${groupsKey}.tasks`), default: "`[]`", meaning: `${groups} whose members may start background tasks, each seeing only its own` },
    { key: k(`${groupsKey}.rateLimit`), default: '`{ "perSender": 10, "perChat": 30, "window": "1h" }`', meaning: "addressed messages per sender and per group in each window; `0` is no limit" },
    { key: k("dmRateLimit"), default: '`{ "perSender": 30, "window": "1h" }`', meaning: "messages per paired person per window; `0` is no limit" },
    { key: k("namePattern"), default: "`null`", meaning: "a regex; being called by it counts as being addressed" },
    { key: k("queueMode"), default: "`null`", meaning: "overrides `agent.queueMode` for this channel" },
  ];
}

/** The template lines of the shared keys (commented out by `hearth init`, like the rest of the block); `last`: no comma after them. */
export function accessTemplate(groupsKey: string, groupExample: string, last = false): string {
  return `"ownerIds": ["<your user id>"],      // you: full access in your private chat
"dmPolicy": "pairing",               // others' DMs: pairing (you approve a code) | allowlist | disabled
"maxPendingPairings": 3,             // pairing codes that may wait for your approval at once
"allowFrom": [],                     // user ids that may DM without pairing (never see private files)
"${groupsKey}": {
  "policy": "allowlist",             // allowlist (only "allow") | open (any group) | disabled
  "allow": ["${groupExample}"],
  "requireMention": true,            // answer only when mentioned, replied to or named
  "rateLimit": { "perSender": 10, "perChat": 30, "window": "1h" }, // addressed messages per window; 0 = no limit
  "tasks": []                        // ids whose members may start background tasks (spawn_task)
},
"dmRateLimit": { "perSender": 30, "window": "1h" }, // messages per paired person per window; 0 = no limit
"namePattern": null,                 // a regex such as "\\\\bhearth\\\\b": being named counts as addressed
"queueMode": null${last ? " " : ","}                   // overrides agent.queueMode for this channel`;
}
