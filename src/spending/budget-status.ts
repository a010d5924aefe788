// What the budget reports of a day and a month: apart from budget.ts so that the words for it
// (spending-text.ts) need nothing of the budget's state handling.
export interface Limit {
  spentUsd: number;
  /** null: no limit set. Includes today's `/budget raise`. */
  limitUsd: number | null;
}

export interface BudgetStatus {
  day: string;
  month: string;
  today: Limit;
  thisMonth: Limit;
  sharedToday: Limit;
  raisedTodayUsd: number;
  hardStop: boolean;
}
