// A model client that records what each call used, tagged with the run it served. Every model
// call Hearth makes for a session goes through one: the run's turns, the memory flush and the
// compaction summary. Attempts that started and then failed (a /stop, a stall, a cut-off stream)
// are recorded too, marked unfinished: the API bills them. A call refused before it started
// records nothing.
import type { Usage } from "../agent/messages.ts";
import type { ModelClient } from "../agent/providers/model.ts";
import type { UsageTag } from "./usage-record.ts";

/** Records one call's usage; `unfinished` for an attempt that did not finish. Must not throw. */
export type UsageSink = (tag: UsageTag, model: string, usage: Usage, opts?: { unfinished?: boolean }) => void;

/** `tag` is read when each call ends, so a long-lived client (compaction's) follows the current run. */
export function meteredModel(inner: ModelClient, tag: () => UsageTag, sink: UsageSink): ModelClient {
  return {
    model: inner.model,
    async stream(req, opts) {
      const result = await inner.stream(req, opts);
      for (const u of result.unfinished ?? []) sink(tag(), u.model, u.usage, { unfinished: true });
      if (result.type === "ok") sink(tag(), result.message.model, result.message.usage);
      return result;
    },
  };
}
