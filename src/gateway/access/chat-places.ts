// Which chats Hearth may post into unasked by anyone there, and in whose scope: the owner's own
// chats (main), the groups the config allows and the people paired with Hearth (their shared
// sessions, as access.ts names them), nothing else. A job or task whose answer goes to a chat is
// made in that chat's scope, so the owner's memory never reaches a group or a stranger.
import type { DeliveryTarget } from "../../channels/channel.ts";
import type { ChatPlace, PlaceOfChat } from "../../channels/chat-place.ts";
import { channelDescriptor } from "../../channels/registry.ts";
import type { Config } from "../../config/schema.ts";
import { accessRules } from "./access.ts";
import type { PairingStore } from "./pairing.ts";

/**
 * `ownerChat`: the owner's most recent chat (a Discord DM channel's id is not the owner's user id,
 * so it is known only from their messages); absent or undefined: none known.
 */
export function chatPlaces(config: Config, pairing: Pick<PairingStore, "isApproved">, ownerChat?: () => DeliveryTarget | undefined): PlaceOfChat {
  return (to) => placeOf(config, pairing, to, ownerChat?.());
}

function placeOf(config: Config, pairing: Pick<PairingStore, "isApproved">, to: DeliveryTarget, owner: DeliveryTarget | undefined): ChatPlace {
  if (to.channel === "cli") return { type: "owner" };
  const text = `${to.channel}:${to.chatId}${to.threadId ? `:${to.threadId}` : ""}`;
  const rules = accessRules(config, to.channel);
  if (!rules) return { type: "refused", reason: `${text} is on ${to.channel}, which is not set up in config.json` };
  if (owner && owner.channel === to.channel && owner.chatId === to.chatId) return { type: "owner" };
  // The platform says what its chat ids name: a Telegram private chat's id is its user's id and
  // groups have negative ids; a Discord channel id does not say whether it is a DM.
  const d = channelDescriptor(to.channel);
  const kind = d?.chats?.kind(to.chatId) ?? "unknown";
  const person = kind === "person";
  if (person && rules.ownerIds.includes(to.chatId)) return { type: "owner" };
  // Under groups.policy "open" Hearth answers in any group; where an id may be a DM, only a listed one counts.
  const listed = rules.groups.allow.includes(to.chatId) || (rules.groups.policy === "open" && kind === "group");
  if (!person && rules.groups.policy !== "disabled" && listed) {
    return { type: "shared", sessionKey: `group:${to.channel}:${to.chatId}${to.threadId ? `:${to.threadId}` : ""}` };
  }
  if (person && rules.dmPolicy !== "disabled" && (rules.allowFrom.includes(to.chatId) || (rules.dmPolicy === "pairing" && pairing.isApproved(to.channel, to.chatId)))) {
    return { type: "shared", sessionKey: `dm:${to.channel}:${to.chatId}` };
  }
  const section = `channels.${to.channel}.${d?.groupsKey ?? "groups"}.allow`;
  return {
    type: "refused",
    reason:
      kind === "unknown"
        ? `${text} is not the owner's chat or a channel listed in ${section}`
        : d?.capabilities.groups === false
          ? `${text} is not the owner's chat, one in channels.${to.channel}.allowFrom or a person paired with Hearth`
          : `${text} is not the owner's chat, an allowed group (${section}) or a person paired with Hearth`,
  };
}
