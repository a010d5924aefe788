// How money is written for people; apart from budget.ts so that `hearth status` can print the
// spending line without loading the budget's state handling.
import type { BudgetStatus, Limit } from "./budget-status.ts";

export const usdText = (v: number): string => `$${v.toFixed(2)}`;

export function spendingLine(s: Pick<BudgetStatus, "today" | "thisMonth" | "raisedTodayUsd">): string {
  const part = (l: Limit) => (l.limitUsd === null ? `${usdText(l.spentUsd)} (no limit)` : `${usdText(l.spentUsd)} of ${usdText(l.limitUsd)} (${Math.floor((l.spentUsd / l.limitUsd) * 100)} %)`);
  const raised = s.raisedTodayUsd > 0 ? ` · raised today by ${usdText(s.raisedTodayUsd)}` : "";
  return `Spent today: ${part(s.today)} · this month: ${part(s.thisMonth)}${raised}`;
}
