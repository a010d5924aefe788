// `npm run bench`: runs every benchmark, prints one table and writes bench/results.json.
// Figures are measured, never asserted by tests: these machines are shared and noisy.
import { writeFileSync } from "node:fs";
import { backupBench } from "./backup.bench.ts";
import { cachePrefixBench } from "./cache-prefix.bench.ts";
import { execBench } from "./exec.bench.ts";
import { meetsTarget, type Figure } from "./harness.ts";
import { gatewayBench } from "./gateway.bench.ts";
import { heartbeatBench } from "./heartbeat.bench.ts";
import { memoryContextBench } from "./memory-context.bench.ts";
import { memorySearchBench } from "./memory-search.bench.ts";
import { parsersBench } from "./parsers.bench.ts";
import { recallBench } from "./recall.bench.ts";
import { scaleBench } from "./scale.bench.ts";
import { startupBench } from "./startup.bench.ts";
import { telegramBench } from "./telegram.bench.ts";
import { telegramMemoryBench } from "./telegram-memory.bench.ts";
import { transcriptBench } from "./transcript.bench.ts";

const benchmarks: Array<[string, () => Promise<Figure[]>]> = [
  ["startup", startupBench],
  ["transcript", transcriptBench],
  ["gateway", gatewayBench],
  ["memory-context", memoryContextBench],
  ["memory-search", memorySearchBench],
  ["cache-prefix", cachePrefixBench],
  ["telegram", telegramBench],
  ["telegram-memory", telegramMemoryBench],
  ["exec", execBench],
  ["heartbeat", heartbeatBench],
  ["scale", scaleBench],
  ["parsers", parsersBench],
  ["recall", recallBench],
  ["backup", backupBench],
];

const only = process.argv.slice(2);
const rows: Array<Figure & { ok: boolean }> = [];
for (const [name, run] of benchmarks) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stderr.write(`running ${name}…\n`);
  for (const f of await run()) rows.push({ ...f, ok: meetsTarget(f) });
}

const cells = rows.map((r) => [r.name, `${r.value} ${r.unit}`.trim(), `${r.better === "higher" ? "≥" : "<"} ${r.target} ${r.unit}`.trim(), r.ok ? "ok" : "MISSED"]);
const header = ["figure", "value", "target", "ok"];
const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
const line = (c: string[]) => c.map((x, i) => x.padEnd(widths[i]!)).join("  ");
process.stdout.write(`${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${cells.map(line).join("\n")}\n`);
writeFileSync(new URL("./results.json", import.meta.url), `${JSON.stringify({ at: new Date().toISOString(), node: process.version, figures: rows }, null, 2)}\n`);
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
