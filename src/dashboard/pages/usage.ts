// Usage: what the last 30 days cost, per day as a stacked bar chart (hand-drawn SVG) split by
// kind, and by model; today's and this month's spend against the budgets; the costliest sessions.
// Figures come from usage.jsonl, the ledger budgets use; days are the owner's local days.
import { kindOf, type UsageRecord } from "../../spending/usage-record.ts";
import { esc, named, table, usd } from "../layout.ts";
import type { Page } from "../pages.ts";

const DAYS = 30;
/** What a cost was for, in the chart's stacking order. */
export const CATEGORIES = ["chat", "heartbeat", "cron", "task", "upkeep", "transcription", "search"] as const;
type Category = (typeof CATEGORIES)[number];

export function categoryOf(r: UsageRecord): Category {
  const kind = kindOf(r);
  if (kind === "transcription") return "transcription";
  if (kind === "web") return "search";
  return r.purpose === "compaction" || r.purpose === "flush" ? "upkeep" : r.purpose;
}

/** The `count` local dates ending with `today` ("2026-11-25"), oldest first. */
export function lastDays(today: string, count: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(end - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

export const page: Page = {
  id: "usage",
  path: "/usage",
  title: "Usage",
  order: 40,
  render(host) {
    const budget = host.usage.budget();
    const days = lastDays(budget.day, DAYS);
    // Two days of slack: a record's local day may start before its UTC date.
    const records = host.usage.records(Date.parse(`${days[0]}T00:00:00Z`) - 2 * 86_400_000).filter((r) => r.day >= days[0]!);
    const perDay = new Map(days.map((d) => [d, Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>]));
    const perModel = new Map<string, { cost: number; calls: number }>();
    const perSession = new Map<string, number>();
    for (const r of records) {
      const day = perDay.get(r.day);
      if (day) day[categoryOf(r)] += r.costUsd;
      const m = perModel.get(r.model) ?? { cost: 0, calls: 0 };
      perModel.set(r.model, { cost: m.cost + r.costUsd, calls: m.calls + 1 });
      perSession.set(r.session, (perSession.get(r.session) ?? 0) + r.costUsd);
    }
    const total = records.reduce((s, r) => s + r.costUsd, 0);
    const models = [...perModel].sort((a, b) => b[1].cost - a[1].cost).map(([m, v]) => [esc(m), esc(v.calls), usd(v.cost)]);
    const nameOf = host.names();
    const sessions = [...perSession].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([s, c]) => [named(nameOf(s), s), usd(c)]);
    return `
<section class="cards" aria-label="Spending">
  ${meter("Today", budget.today.spentUsd, budget.today.limitUsd)}
  ${meter("This month", budget.thisMonth.spentUsd, budget.thisMonth.limitUsd)}
  <div class="card"><div class="label">Last ${DAYS} days</div><div class="value">${usd(total)}</div><div class="muted">${records.length} paid calls</div></div>
</section>
<section aria-labelledby="chart-h"><h2 id="chart-h">Cost per day</h2>
${chart(days, perDay)}
<ul class="legend-list">${CATEGORIES.map((c) => `<li><span class="swatch k-${c}"></span>${c}</li>`).join("")}</ul>
<details><summary>As a table</summary>${table(["Day", ...CATEGORIES, "Total"], days.map((d) => { const v = perDay.get(d)!; return [esc(d), ...CATEGORIES.map((c) => usd(v[c])), `<strong>${usd(sum(v))}</strong>`]; }).reverse(), "")}</details>
</section>
<div class="two">
<section aria-labelledby="mo"><h2 id="mo">By model</h2>${table(["Model", "Calls", "Cost"], models, "No paid calls in these 30 days.", "By model")}</section>
<section aria-labelledby="ss"><h2 id="ss">Most expensive sessions</h2>${table(["Session", "Cost"], sessions, "No paid calls in these 30 days.", "Most expensive sessions")}</section>
</div>`;
  },
};

const sum = (v: Record<Category, number>): number => CATEGORIES.reduce((s, c) => s + v[c], 0);

function meter(label: string, spent: number, limit: number | null): string {
  const pct = limit ? Math.min(100, Math.round((spent / limit) * 100)) : null;
  return `<div class="card"><div class="label">${esc(label)}</div><div class="value">${usd(spent)}</div>${
    pct === null ? `<div class="muted">no budget set</div>` : `<div class="meter${pct >= 100 ? " over" : pct >= 80 ? " near" : ""}" role="meter" aria-valuemin="0" aria-valuemax="100" aria-valuenow="${pct}" aria-label="${esc(label)}: ${pct} % of the budget"><span class="w${Math.round(pct / 5) * 5}"></span></div><div class="muted">${pct} % of ${usd(limit!)}</div>`
  }</div>`;
}

/**
 * Stacked bars, one per day; each bar carries its day and total for tests and tooltips. The dollar
 * scale is an SVG of its own beside the plot's, so that on a phone, where the plot scrolls
 * sideways, it stays in view; style.css draws both at one scale (the widths here: left and W).
 */
function chart(days: string[], perDay: Map<string, Record<Category, number>>): string {
  const W = 720, H = 220, left = 48, right = 16, bottom = 22, top = 10;
  const totals = days.map((d) => sum(perDay.get(d)!));
  const max = niceMax(Math.max(...totals));
  const plotW = W - left;
  const bw = (plotW - right) / days.length;
  const y = (v: number) => H - bottom - (v / max) * (H - bottom - top);
  const ticks = [0, 0.5, 1].map((f) => max * f);
  const axis = ticks.map((v) => `<text class="axis" x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${usd(v)}</text>`).join("");
  const grid = ticks.map((v) => `<line class="grid" x1="0" x2="${plotW - right}" y1="${y(v)}" y2="${y(v)}"/>`).join("");
  const bars = days.map((d, i) => {
    const v = perDay.get(d)!;
    let base = 0;
    const rects = CATEGORIES.filter((c) => v[c] > 0).map((c) => {
      const r = `<rect class="k-${c}" x="${(i * bw + 2).toFixed(1)}" width="${(bw - 4).toFixed(1)}" y="${y(base + v[c]).toFixed(1)}" height="${Math.max(0.5, y(base) - y(base + v[c])).toFixed(1)}"/>`;
      base += v[c];
      return r;
    }).join("");
    const label = i % 5 === (days.length - 1) % 5 ? `<text class="axis" x="${(i * bw + bw / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${d.slice(5)}</text>` : "";
    return `<g class="bar" data-day="${d}" data-total="${totals[i]!.toFixed(6)}"><title>${d}: ${usd(totals[i]!)}</title>${rects}</g>${label}`;
  }).join("");
  return `<figure class="chart"><svg class="y-axis" viewBox="0 0 ${left} ${H}" aria-hidden="true">${axis}</svg><div class="plot"><svg viewBox="0 0 ${plotW} ${H}" role="img" aria-label="Cost per day for the last ${days.length} days, highest ${usd(Math.max(...totals))}">${grid}${bars}</svg></div></figure>`;
}

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= v)!;
}
