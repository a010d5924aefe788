// Approving a pairing code, whichever door the owner used (`hearth pairing approve`, /approve,
// the Approve button, the dashboard): the store records it, and the person is told in the
// private chat they wrote from that they may talk now — else they would wait for a reply that
// never comes, or give up.
import { channelDescriptor } from "../../channels/registry.ts";
import type { ApprovedSender } from "./pairing.ts";
import type { Logger } from "../../process/log.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";
import type { PairingStore } from "./pairing.ts";

/** What approving a pairing code uses of the gateway. */
export interface PairingApprovalDeps {
  channels: ChannelRegistry;
  log: Logger;
  pairing: PairingStore;
}

export const APPROVED_TEXT = "Good news: my owner approved you. You can talk to me now — just write.";

/** Approves `code` (see PairingStore.approve); null when no such live code exists. The message is sent in the background. */
export function approvePairing(ctx: PairingApprovalDeps, code: string): ApprovedSender | null {
  const approved = ctx.pairing.approve(code);
  if (approved) void tellApproved(ctx, approved);
  return approved;
}

/** Waits between the attempts to tell an approved person (a platform's passing refusal, a reconnect). */
export const WELCOME_RETRY_MS = [1_000, 5_000];

/** Resolves once the person was told, or every attempt failed (logged). Never rejects. */
export async function tellApproved(ctx: PairingApprovalDeps, a: ApprovedSender, retryMs: readonly number[] = WELCOME_RETRY_MS): Promise<void> {
  // A Telegram private chat's id is the user's; a Discord DM channel is not, and an older code did not record it.
  const chatId = a.chatId ?? (channelDescriptor(a.channel)?.chats?.kind(a.userId) === "person" ? a.userId : undefined);
  if (!chatId || a.channel === "cli") return;
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.channels.send({ channel: a.channel, chatId }, APPROVED_TEXT, { from: "Hearth", keep: false });
      return;
    } catch (err) {
      const wait = retryMs[attempt];
      ctx.log.warn("pairing.welcome_failed", { channel: a.channel, user: a.userId, error: err, ...(wait !== undefined ? { retryInMs: wait } : {}) });
      if (wait === undefined) return;
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
    }
  }
}
