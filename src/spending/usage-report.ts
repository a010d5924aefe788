// `hearth usage`: usage.jsonl summed by day, session, sender, purpose or kind. Totals are sums of
// the records themselves, so they equal what the file says, call by call.
import { kindOf, type UsageRecord } from "./usage-record.ts";

export const reportGroupings = ["day", "session", "sender", "purpose", "kind"] as const;
export type ReportGrouping = (typeof reportGroupings)[number];

export interface UsageTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
  /** Web searches and page fetches, by the provider's server tools and Hearth's own. */
  webSearches: number;
  webFetches: number;
  /** Seconds of audio transcribed. */
  audioSeconds: number;
  costUsd: number;
}

export interface UsageReport {
  by: ReportGrouping;
  /** ISO time: records from then on are counted. */
  since: string;
  rows: Array<{ key: string } & UsageTotals>;
  total: UsageTotals;
}

const zero = (): UsageTotals => ({ calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, webSearches: 0, webFetches: 0, audioSeconds: 0, costUsd: 0 });

/** Adds one record: a model call or a transcription is a call; Hearth's own web tools add searches and fetches only. */
function add(t: UsageTotals, r: UsageRecord): void {
  t.costUsd += r.costUsd;
  if (r.kind === "speech" || r.kind === "embedding") {
    t.calls++;
    return;
  }
  if (r.kind === "transcription") {
    t.calls++;
    t.audioSeconds += r.audioSeconds ?? 0;
    return;
  }
  if (kindOf(r) === "model") t.calls++;
  t.webSearches += (r.webSearchRequests ?? 0) + (r.localWebSearches ?? 0);
  t.webFetches += (r.webFetchRequests ?? 0) + (r.localWebFetches ?? 0);
  t.inputTokens += r.inputTokens;
  t.outputTokens += r.outputTokens;
  t.cacheReadTokens += r.cacheReadTokens;
  t.cacheWrite5mTokens += r.cacheWrite5mTokens;
  t.cacheWrite1hTokens += r.cacheWrite1hTokens;
}

/** USD to the micro-dollar: float sums of many records must not print as 0.30000000000000004. */
export const roundUsd = (v: number): number => Math.round(v * 1e6) / 1e6;

function keyOf(r: UsageRecord, by: ReportGrouping): string {
  switch (by) {
    case "day":
      return r.day;
    case "session":
      return r.session;
    case "purpose":
      return r.purpose;
    case "kind":
      return kindOf(r);
    case "sender":
      return r.sender === undefined ? "(no sender)" : `${r.channel ?? "?"}:${r.sender}`;
    default:
      return by satisfies never;
  }
}

export function usageReport(records: UsageRecord[], by: ReportGrouping, since: number): UsageReport {
  const rows = new Map<string, UsageTotals>();
  const total = zero();
  for (const r of records) {
    if (Date.parse(r.at) < since) continue;
    const key = keyOf(r, by);
    const row = rows.get(key) ?? zero();
    add(row, r);
    rows.set(key, row);
    add(total, r);
  }
  const sorted = [...rows.entries()].sort(([a, x], [b, y]) => (by === "day" ? a.localeCompare(b) : y.costUsd - x.costUsd || a.localeCompare(b)));
  return {
    by,
    since: new Date(since).toISOString(),
    rows: sorted.map(([key, t]) => ({ key, ...t, costUsd: roundUsd(t.costUsd) })),
    total: { ...total, costUsd: roundUsd(total.costUsd) },
  };
}

const n = (v: number) => v.toLocaleString("en-US");

/** Audio length as m:ss ("0:42", "12:05"), or "-" for none. */
function audioText(seconds: number): string {
  if (seconds === 0) return "-";
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export function formatUsageReport(rep: UsageReport, sinceText: string): string {
  // The web columns appear once the period has any web use, the audio column once it has a transcription.
  const web = rep.total.webSearches + rep.total.webFetches > 0;
  const audio = rep.total.audioSeconds > 0;
  const head = [rep.by.toUpperCase(), "CALLS", "INPUT", "CACHE WRITE", "CACHE READ", "OUTPUT", ...(web ? ["SEARCHES", "FETCHES"] : []), ...(audio ? ["AUDIO"] : []), "COST"];
  const line = (key: string, t: UsageTotals) => [
    key, n(t.calls), n(t.inputTokens), n(t.cacheWrite5mTokens + t.cacheWrite1hTokens), n(t.cacheReadTokens), n(t.outputTokens),
    ...(web ? [n(t.webSearches), n(t.webFetches)] : []),
    ...(audio ? [audioText(t.audioSeconds)] : []),
    `$${t.costUsd.toFixed(4)}`,
  ];
  const table = [head, ...rep.rows.map((r) => line(r.key, r)), line("Total", rep.total)];
  const widths = head.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const fmt = (row: string[]) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  const body = rep.rows.length === 0 ? ["(no paid calls in this period)"] : table.map(fmt);
  return `Usage since ${rep.since.slice(0, 16).replace("T", " ")} UTC (${sinceText}), by ${rep.by}:\n${body.join("\n")}\n`;
}
