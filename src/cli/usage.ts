// `hearth usage [--by day|session|sender|purpose|kind] [--since 7d] [--json]`: reads usage.jsonl in
// the home folder; the daemon need not run. A record from a newer Hearth stops it (exit 2).
import { parseDuration } from "../fields/config-fields.ts";
import { readUsageRecords, usageFile } from "../spending/usage-record.ts";
import { formatUsageReport, reportGroupings, usageReport, type ReportGrouping } from "../spending/usage-report.ts";
import { parse, UsageError } from "./args.ts";

interface UsageIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function runUsage(home: string, args: string[], io: UsageIO, now = Date.now()): number {
  const { values } = parse(args, { by: { type: "string" }, since: { type: "string" }, json: { type: "boolean" } });
  const by = (values.by ?? "day") as ReportGrouping;
  if (!reportGroupings.includes(by)) throw new UsageError(`--by must be one of ${reportGroupings.join(", ")} (got "${values.by}").`);
  const sinceText = values.since ?? "30d";
  const since = sinceOf(sinceText, now);
  const file = usageFile(home);
  const { values: records, badLines } = readUsageRecords(file);
  if (badLines.length > 0) io.stderr.write(`hearth: ${file}: skipped ${badLines.length} unreadable line(s) (${badLines.slice(0, 5).join(", ")}${badLines.length > 5 ? ", …" : ""}).\n`);
  const report = usageReport(records, by, since);
  io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatUsageReport(report, sinceText));
  return 0;
}

/** "7d", "12h" (back from now) or a date "2026-11-01" (UTC midnight). */
function sinceOf(text: string, now: number): number {
  const ms = parseDuration(text);
  if (ms !== null) return now - ms;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text))) return Date.parse(text);
  throw new UsageError(`--since takes a duration such as "7d" or "24h", or a date such as "2026-11-01" (got "${text}").`);
}
