// The sign a platform puts on a message while Hearth answers it (Telegram's and Slack's 👀),
// around the reply to that message: on now, off before the final delivery resolves, so the reply
// is recorded as delivered (gateway/outbox.ts) only after the sign is gone.
import { relaySink, type ReplySink } from "./channel.ts";

/** `sink` with the sign: `react(true)` now, `react(false)` once finish or fail delivered. `react` must not reject. */
export function withWorkingSign(sink: ReplySink, react: (on: boolean) => Promise<void>): ReplySink {
  const shown = react(true);
  const clearAfter = async (deliver: Promise<void>): Promise<void> => {
    try {
      await deliver;
    } finally {
      await shown;
      await react(false);
    }
  };
  return relaySink(sink, {
    finish: (text, outcome) => clearAfter(sink.finish(text, outcome)),
    fail: (message) => clearAfter(sink.fail(message)),
  });
}
