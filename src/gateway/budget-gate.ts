// The budget at the start of a lane run: what the run executor does with the budget's decision.
// Only chat runs are gated here; the scheduler asks the budget itself before it queues a job or
// a heartbeat, so that a skipped job is recorded as skipped rather than as a failed run, and a
// background task asks it each time its run is about to start (tasks/service.ts), so that a
// refused task ends with a result that says so. Inside the run each paid call is reserved on its
// own (paid-calls.ts); a limit a call did not fit is refused here from the next message on.
import { hardStopText, OVER_BUDGET_MARK, RESTING_TEXT, TOO_SMALL_TEXT, type BudgetCheck } from "../spending/budget.ts";
import type { Logger } from "../process/log.ts";
import type { Budget } from "../spending/budget.ts";

/** What the budget gate uses of the gateway. */
export interface BudgetGateDeps {
  budget: Budget;
  log: Logger;
}

export type Gate =
  | { type: "run" }
  /** Runs; `mark` is appended to its reply. */
  | { type: "over-budget"; mark: string }
  /** Does not run; `text` is the whole reply ("" for none). */
  | { type: "refused"; text: string };

export function budgetGate(ctx: BudgetGateDeps, req: BudgetCheck): Gate {
  if (req.purpose !== "chat") return { type: "run" };
  const d = ctx.budget.check(req);
  switch (d.type) {
    case "allow":
      return { type: "run" };
    case "allow-over-budget":
      return { type: "over-budget", mark: `\n\n${OVER_BUDGET_MARK}` };
    case "refuse":
      ctx.log.info("budget.refused", { session: req.sessionKey, scope: req.scope, limit: d.limit });
      if (req.scope === "main") return { type: "refused", text: hardStopText(d.reason) };
      // A shared chat hears it once per period; after that, silence. A limit too small for one answer was not spent.
      return { type: "refused", text: ctx.budget.firstRestingNotice(req.sessionKey, d.limit) ? (d.tooSmall ? TOO_SMALL_TEXT : RESTING_TEXT) : "" };
    default:
      return d satisfies never;
  }
}
