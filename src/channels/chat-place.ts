// Whose a chat is, as far as Hearth posting into it goes: where an answer goes decides the scope
// it is made in. The gateway decides it from the access rules and the pairing store
// (gateway/access/chat-places.ts); the scheduler and the task service ask it when a job or task that
// posts somewhere is created, and the scheduler again before each run.
import type { DeliveryTarget } from "./channel.ts";

export type ChatPlace =
  /** One of the owner's own chats (a private chat with an owner id, the terminal): answers are made in main. */
  | { type: "owner" }
  /**
   * A shared chat Hearth may post into (an allowed group, a paired or allow-listed person):
   * answers are made in the shared scope of its session `sessionKey` (its folder, tools, budget).
   */
  | { type: "shared"; sessionKey: string }
  /** Not a chat Hearth posts into; `reason` says why, as a tool result or a CLI error shows it. */
  | { type: "refused"; reason: string };

/**
 * Decides a chat's place. Called when a job or task is created and before each job run; must not
 * throw, and reads the rules as they are now (a revoked pairing refuses the next run).
 */
export type PlaceOfChat = (to: DeliveryTarget) => ChatPlace;
