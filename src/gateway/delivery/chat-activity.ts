// "Busy" in a chat while Hearth works on something the person is waiting for — a message's
// files being downloaded, transcribed or converted, a picture being uploaded — before any reply
// text exists. Platforms show a chat action for about 5 s (Telegram) or 10 s (Discord), so it
// is refreshed while the work lasts and stops with it. Never blocks the work: each refresh is
// fire-and-forget, and a chat that cannot show it (a Bot API emulator) is not asked again.
import type { ChatActivity, InboundMessage } from "../../channels/channel.ts";
import type { ChannelRegistry } from "./channel-registry.ts";

/** Shorter than Telegram's ~5 s, so the indicator never blinks off during long work. */
export const ACTIVITY_REFRESH_MS = 4_000;

/** Shows `activity` in the chat of `m` until the returned function is called. */
export function keepShowingActivity(channels: Pick<ChannelRegistry, "showActivity">, m: InboundMessage, activity: ChatActivity): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const show = () => {
    if (stopped) return;
    channels.showActivity(m, activity).catch(() => stop());
    timer = setTimeout(show, ACTIVITY_REFRESH_MS);
    timer.unref();
  };
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
  };
  show();
  return stop;
}

/** Runs `work` while the chat of `m` shows `activity`. */
export async function showActivityWhile<T>(channels: Pick<ChannelRegistry, "showActivity">, m: InboundMessage, activity: ChatActivity, work: () => Promise<T>): Promise<T> {
  const stop = keepShowingActivity(channels, m, activity);
  try {
    return await work();
  } finally {
    stop();
  }
}
