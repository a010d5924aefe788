// Paid calls and the budget (issue 38): before each model call the run asks for a reservation of
// the call's worst case, and settles it once the call ended. The agent knows nothing of prices or
// limits: the gateway passes the question in (a `ReserveCall`, built on spending/reservations.ts)
// and this file streams a call inside its answer. The loop's model calls and the compaction
// summary go through `streamReserved`; the other paid calls (transcription, speech, embeddings,
// web search) take a `Held` from hooks of their own.
import type { ModelError } from "./model-errors.ts";
import type { ModelCallOptions, ModelClient, ModelRequest, ModelResult } from "./providers/model.ts";

/** A model call's hold on the budget. */
export interface CallHold {
  /**
   * Holds one more attempt's worst case: called when the model client is about to try again
   * (a retry, a fallback) after an attempt that may have been billed. Returns null when held,
   * else why not (as `Reservation.reason`): the call then stops. Must not throw.
   */
  extend(): string | null;
  /**
   * Releases the hold: called once the call ended — answered, failed or aborted — after its
   * usage was recorded (the metered model records it before its stream resolves). Safe to call twice.
   */
  settle(): void;
}

export type Reservation =
  /**
   * `request`: the request to send instead, asking for no more than was held (a lower
   * max_tokens, fewer or shorter web tool uses); absent: the request as asked.
   */
  | { type: "reserved"; hold: CallHold; request?: ModelRequest }
  /** `reason` says why in words for the chat the run answers: "today's budget for this chat is spent". */
  | { type: "refused"; reason: string };

/**
 * Asked synchronously before each model call with the request about to be sent, so that calls
 * in parallel never see the same headroom. Must not throw. A refused call is not made.
 */
export type ReserveCall = (req: ModelRequest) => Reservation;

/**
 * The budget's answer before another paid call. Reserved: `settle` is called exactly once after
 * the call, with what it used (`null`: it failed before it was billed, or was never made), and
 * records it in the usage ledger and releases the hold. Refused: `reason` as above.
 */
export type Held<Used> = { type: "reserved"; settle: (used: Used | null) => void } | { type: "refused"; reason: string };

/** The error a call refused by the budget ends with: not retried, no fallback. */
export const budgetError = (model: string, reason: string): ModelError => ({ kind: "budget", model, message: reason });

/**
 * Streams `req` inside a reservation: refused → a `budget` error, nothing sent; reserved → the
 * call (as the reservation asked it to be made), each retry or fallback held on top (one that
 * does not fit stops the call as a `budget` error), and the hold settled however it ends.
 * Without `reserve`, just the call. `onSend` hears the request as it is sent.
 */
export async function streamReserved(model: ModelClient, req: ModelRequest, opts: ModelCallOptions, reserve: ReserveCall | undefined, onSend?: (sent: ModelRequest) => void): Promise<ModelResult> {
  if (!reserve) {
    onSend?.(req);
    return model.stream(req, opts);
  }
  const r = reserve(req);
  if (r.type === "refused") return { type: "error", error: budgetError(model.model, r.reason), partial: [] };
  const sent = r.request ?? req;
  onSend?.(sent);
  const stop = new AbortController();
  let refused: string | null = null;
  try {
    const result = await model.stream(sent, {
      signal: AbortSignal.any([opts.signal, stop.signal]),
      onEvent: (e) => {
        // Emitted before the client waits to try again: the wait ends at once when it is stopped.
        if ((e.type === "retry" || e.type === "fallback") && refused === null) {
          refused = r.hold.extend();
          if (refused !== null) stop.abort();
        }
        opts.onEvent(e);
      },
    });
    if (refused !== null && !opts.signal.aborted && result.type === "error") return { ...result, error: budgetError(result.error.model, refused) };
    return result;
  } finally {
    r.hold.settle();
  }
}
