// Who may talk to Hearth, and in which session (DESIGN §4). Decided before anything costs a
// model call: a refused or unaddressed message gets at most a pairing code.
import type { Scope } from "../../agent/messages.ts";
import type { DeliveryTarget, InboundMessage } from "../../channels/channel.ts";
import type { Config } from "../../config/schema.ts";
import type { ChannelAccess } from "../../channels/descriptor.ts";
import { channelAccess, CONFIGURABLE_IDS, type ConfigurableId } from "../../channels/registry.ts";
import type { PairingStore } from "./pairing.ts";
import type { Audience } from "./audience.ts";

/** What access decisions read of a channel's rules (its descriptor's ChannelAccess; Discord's "guilds" are its groups). */
export interface AccessRules {
  ownerIds: string[];
  dmPolicy: ChannelAccess["dmPolicy"];
  allowFrom: string[];
  groups: { policy: ChannelAccess["groups"]["policy"]; allow: string[]; requireMention: boolean; tasks?: string[] };
  queueMode: ChannelAccess["queueMode"];
}

export function accessRules(config: Config, channel: InboundMessage["channel"]): AccessRules | null {
  return channelAccess(config.channels, channel);
}

export type AccessDecision =
  | { type: "allow"; sessionKey: string; scope: Scope; isOwner: boolean }
  /** A group message that does not call for an answer: kept as chat context only. */
  | { type: "observe" }
  | { type: "pair" }
  | { type: "refuse"; reason: string };

/**
 * `audience`: who can read the chat (audience.ts judged it from the members the adapter reported):
 * only a private chat is a DM here, whatever the platform calls it.
 */
export function decideAccess(m: InboundMessage, rules: AccessRules | null, pairing: Pick<PairingStore, "isApproved">, audience: Audience): AccessDecision {
  if (m.channel === "cli") return { type: "allow", sessionKey: "main", scope: "main", isOwner: true };
  if (!rules) return { type: "refuse", reason: `channel ${m.channel} is not configured` };
  const isOwner = rules.ownerIds.includes(m.sender.id);

  if (audience.type === "private") {
    if (isOwner) return { type: "allow", sessionKey: "main", scope: "main", isOwner };
    const known = rules.allowFrom.includes(m.sender.id) || (rules.dmPolicy === "pairing" && pairing.isApproved(m.channel, m.sender.id));
    if (known && rules.dmPolicy !== "disabled") {
      return { type: "allow", sessionKey: `dm:${m.channel}:${m.sender.id}`, scope: "shared", isOwner };
    }
    if (rules.dmPolicy === "pairing") return { type: "pair" };
    return { type: "refuse", reason: `DMs from ${m.sender.id} are not allowed (dmPolicy ${rules.dmPolicy})` };
  }

  const g = rules.groups;
  const thread = m.chat.threadId ? `:${m.chat.threadId}` : "";
  // A direct chat others can read (someone joined the owner's): the owner is still answered
  // there, as in a group — its own shared session, never the owner's memory. Anyone else in it
  // is a group member like any other.
  if (audience.direct && isOwner) {
    if (g.requireMention && !m.addressed) return { type: "observe" };
    return { type: "allow", sessionKey: `group:${m.channel}:${m.chat.id}${thread}`, scope: "shared", isOwner };
  }
  if (g.policy === "disabled") return { type: "refuse", reason: "groups are disabled" };
  const ids = [m.chat.id, ...(m.chat.scopeIds ?? [])];
  if (g.policy === "allowlist" && !ids.some((id) => g.allow.includes(id))) {
    return { type: "refuse", reason: `chat ${m.chat.id} is not in the group allowlist` };
  }
  if (g.requireMention && !m.addressed) return { type: "observe" };
  return { type: "allow", sessionKey: `group:${m.channel}:${m.chat.id}${thread}`, scope: "shared", isOwner };
}

/**
 * Whether group message `m` comes from a group the owner opened to background tasks
 * (`groups.tasks` / `guilds.tasks`, by the same ids as `allow`): its run gets the task tools.
 * Never a DM, never the terminal.
 */
export function opensTasks(m: InboundMessage, rules: AccessRules | null): boolean {
  if (!rules || m.chat.type !== "group") return false;
  const ids = [m.chat.id, ...(m.chat.scopeIds ?? [])];
  return ids.some((id) => rules.groups.tasks?.includes(id) ?? false);
}

/** The chat of group session `group:<channel>:<chatId>[:<threadId>]` (decideAccess names it); null for any other session. */
export function groupTarget(sessionKey: string): DeliveryTarget | null {
  const m = /^group:([a-z0-9-]+):([^:]+)(?::([^:]+))?$/.exec(sessionKey);
  if (!m || !CONFIGURABLE_IDS.includes(m[1] as ConfigurableId)) return null;
  return { channel: m[1] as ConfigurableId, chatId: m[2]!, ...(m[3] ? { threadId: m[3] } : {}) };
}
