// Untrusted parsing (HTML and PDF in the parse worker): the extraction time of a normal ~200 KB
// article on the main thread (before) and through the worker (after; it must stay within 20 %),
// and the time and peak RSS of the parser bombs. Each bomb runs in a child process of its own: its RSS is its own.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { round, type Figure } from "./harness.ts";

export async function parsersBench(): Promise<Figure[]> {
  const child = fileURLToPath(new URL("./support/parsers-child.ts", import.meta.url));
  const run = (...args: string[]) => JSON.parse(execFileSync(process.execPath, [child, ...args], { encoding: "utf8", maxBuffer: 1 << 20 })) as Record<string, number>;
  const r = run();
  for (const bomb of ["nested3000", "nested200k", "flat5mb", "pdfBomb1gb"]) {
    const b = run(bomb);
    r[`${bomb}Ms`] = b.ms!;
    r[`${bomb}PeakMb`] = b.peakMb!;
  }
  const ms = (n: number) => round(n, 0);
  return [
    { name: `parse: ${r.articleKb} KB article, main thread (before)`, value: ms(r.mainThreadMs!), unit: "ms", target: 2000 },
    { name: `parse: ${r.articleKb} KB article, worker (after)`, value: ms(r.workerMs!), unit: "ms", target: ms(r.mainThreadMs! * 1.2) },
    { name: "parse: article, first use on the main thread (before)", value: ms(r.mainThreadColdMs!), unit: "ms", target: 10_000 },
    { name: "parse: article, worker's first use (after: its start-up)", value: ms(r.workerColdMs!), unit: "ms", target: 10_000 },
    { name: "parse bomb: 3,000 nested divs, time", value: ms(r.nested3000Ms!), unit: "ms", target: 10_000 },
    { name: "parse bomb: 3,000 nested divs, peak RSS", value: round(r.nested3000PeakMb!, 0), unit: "MB", target: 400 },
    { name: "parse bomb: 200,000 nested divs, time", value: ms(r.nested200kMs!), unit: "ms", target: 10_000 },
    { name: "parse bomb: 200,000 nested divs, peak RSS", value: round(r.nested200kPeakMb!, 0), unit: "MB", target: 400 },
    { name: "parse bomb: flat 5 MB page, time", value: ms(r.flat5mbMs!), unit: "ms", target: 15_000 },
    { name: "parse bomb: flat 5 MB page, peak RSS", value: round(r.flat5mbPeakMb!, 0), unit: "MB", target: 400 },
    { name: "parse bomb: 1 GB-inflating PDF, time", value: ms(r.pdfBomb1gbMs!), unit: "ms", target: 30_000 },
    { name: "parse bomb: 1 GB-inflating PDF, peak RSS", value: round(r.pdfBomb1gbPeakMb!, 0), unit: "MB", target: 400 },
  ];
}
