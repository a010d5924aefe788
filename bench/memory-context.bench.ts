// Assembling the main scope's context: from the cache (every run of a session) and cold (a new
// ContextCache: the first run after a start). Cold is measured twice, with 3,650 and with 10
// old daily logs in memory/: the folder is never listed, so the two must be about equal.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/process/log.ts";
import { ContextCache } from "../src/memory/context.ts";
import { previousDate } from "../src/memory/daily-log.ts";
import { measure, percentile, round, type Figure } from "./harness.ts";

const TZ = "Europe/Berlin";
const NOW = Date.UTC(2026, 10, 22, 13, 5);
const TODAY = "2026-11-22";

function makeWorkspace(root: string, logs: number): string {
  const ws = join(root, `ws-${logs}`);
  cpSync(new URL("../workspace", import.meta.url), ws, { recursive: true });
  mkdirSync(join(ws, "memory"), { recursive: true });
  const entry = (i: number) => `### 14:05 · telegram · Owner\n> question number ${i}, about the plan for the week\n\nAn answer of moderate length that mentions the plan, item ${i}, and what comes next.\n\n`;
  let date = TODAY;
  for (let d = 0; d < logs; d++) {
    writeFileSync(join(ws, "memory", `${date}.md`), `# ${date}\n\n${Array.from({ length: 12 }, (_, i) => entry(d * 12 + i)).join("")}`);
    date = previousDate(date);
  }
  const fact = (i: number) => `- 2026-03-${String((i % 28) + 1).padStart(2, "0")}: Fact number ${i}: prefers meetings after 10:00, likes tea.\n`;
  let memory = "# Memory\n\n";
  for (let i = 0; memory.length < 1024 * 1024; i++) memory += fact(i);
  writeFileSync(join(ws, "MEMORY.md"), memory);
  return ws;
}

export async function memoryContextBench(): Promise<Figure[]> {
  const root = mkdtempSync(join(tmpdir(), "hearth-bench-context-"));
  try {
    const many = makeWorkspace(root, 3650);
    const few = makeWorkspace(root, 10);
    const scope = { kind: "main" } as const;

    const warm = new ContextCache({ workspace: many, timezone: TZ, log: silentLogger });
    warm.assemble(scope, NOW);
    const cached = await measure(2000, () => warm.assemble(scope, NOW));

    const cold = (workspace: string) => () => new ContextCache({ workspace, timezone: TZ, log: silentLogger }).assemble(scope, NOW);
    await measure(10, cold(many)); // warm the JIT and the page cache
    const coldMany = await measure(100, cold(many));
    await measure(10, cold(few));
    const coldFew = await measure(100, cold(few));

    return [
      { name: "context assembly, cached (p50)", value: round(percentile(cached, 50), 4), unit: "ms", target: 1 },
      { name: "context assembly, cold (p50)", value: round(percentile(coldMany, 50)), unit: "ms", target: 50 },
      { name: "context assembly, cold, 10 logs instead of 3,650 (p50)", value: round(percentile(coldFew, 50)), unit: "ms", target: 50 },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
