// Shared pieces for benchmarks: timing statistics and the result row every benchmark returns.

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** The figure must stay below this (or reach at least this, when `better` is "higher"). */
  target: number;
  better?: "lower" | "higher";
}

export const meetsTarget = (f: Figure): boolean => (f.better === "higher" ? f.value >= f.target : f.value < f.target);

export async function measure(iterations: number, fn: () => unknown | Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;
