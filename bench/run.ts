// `npm run bench`: runs every benchmark of the default set, prints one table and writes
// bench/results.json. `npm run bench -- NAME…` runs only those, opt-in ones included (they take
// too long for the default set: `soak` is ten minutes). Figures are measured, never asserted by
// tests: these machines are shared and noisy.
import { writeFileSync } from "node:fs";
import { backupBench } from "./backup.bench.ts";
import { cachePrefixBench } from "./cache-prefix.bench.ts";
import { execBench } from "./exec.bench.ts";
import { meetsTarget, type Figure } from "./harness.ts";
import { gatewayBench } from "./gateway.bench.ts";
import { mcpConformanceBench } from "./mcp-conformance.bench.ts";
import { heartbeatBench } from "./heartbeat.bench.ts";
import { memoryContextBench } from "./memory-context.bench.ts";
import { memorySearchBench } from "./memory-search.bench.ts";
import { parsersBench } from "./parsers.bench.ts";
import { recallBench } from "./recall.bench.ts";
import { scaleBench } from "./scale.bench.ts";
import { soakBench } from "./soak.bench.ts";
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
  ["mcp-conformance", mcpConformanceBench],
];

/** Run only when named. */
const optIn: Array<[string, () => Promise<Figure[]>]> = [["soak", soakBench]];

const only = process.argv.slice(2);
const unknown = only.filter((name) => ![...benchmarks, ...optIn].some(([n]) => n === name));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark ${unknown.join(", ")}; the default set: ${benchmarks.map(([n]) => n).join(", ")}; opt-in: ${optIn.map(([n]) => n).join(", ")}\n`);
  process.exit(2);
}
const rows: Array<Figure & { ok: boolean }> = [];
for (const [name, run] of only.length > 0 ? [...benchmarks, ...optIn].filter(([n]) => only.includes(n)) : benchmarks) {
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
