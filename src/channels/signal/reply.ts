// How a reply reaches a Signal chat: the ReplyTransport behind StreamingReply (throttling,
// merging, the split at the message limit), with edits as signal-cli `send` with `editTimestamp`
// (the edited message's original timestamp, which stays its id), the first message quoting the
// one answered in a group, and typing while nothing is visible yet.
//
// Signal's apps show only the first ten edits of a message, so the previews of one message are
// few and spaced further apart each time (the first at once, then 2 s, 4 s, 8 s, … after the
// previous one, at most MAX_PREVIEW_EDITS); a preview edit not allowed yet is skipped (the next one shows the newer
// text anyway), and the final text always gets its edit.
import type { ReplyTransport } from "../streaming-reply.ts";

/** Preview edits of one message; with the placeholder's and the final one, well under Signal's ten. */
export const MAX_PREVIEW_EDITS = 5;
const FIRST_GAP_MS = 2_000;

export interface SignalReplyDeps {
  /** signal-cli's JSON-RPC call (the channel's, rejecting while it is not running). */
  rpc(method: string, params: Record<string, unknown>): Promise<unknown>;
  /** `recipient` or `groupId`. */
  where: Record<string, unknown>;
  /** The quote of the message answered, on the first message only. */
  quote?: { quoteTimestamp: number; quoteAuthor: string };
  clock?: () => number;
}

export function signalTransport(d: SignalReplyDeps): ReplyTransport {
  const clock = d.clock ?? Date.now;
  const edits = new Map<string, { count: number; at: number }>();
  let quote = d.quote;
  return {
    async send(text) {
      const result = (await d.rpc("send", { ...d.where, message: text, ...(quote ?? {}) })) as { timestamp?: unknown } | null;
      const id = Number(result?.timestamp);
      if (!Number.isSafeInteger(id)) throw new Error("signal-cli sent the message but returned no timestamp for it");
      quote = undefined;
      edits.set(String(id), { count: 0, at: clock() });
      return String(id);
    },
    async edit(id, text, { final }) {
      const e = edits.get(id) ?? { count: 0, at: 0 };
      if (!final && (e.count >= MAX_PREVIEW_EDITS || clock() - e.at < (e.count === 0 ? 0 : FIRST_GAP_MS * 2 ** (e.count - 1)))) return;
      await d.rpc("send", { ...d.where, message: text, editTimestamp: Number(id) });
      edits.set(id, { count: e.count + 1, at: clock() });
    },
    async delete(id) {
      await d.rpc("remoteDelete", { ...d.where, targetTimestamp: Number(id) });
    },
    typing: async () => void (await d.rpc("sendTyping", d.where)),
  };
}
