// A unified diff of two texts, line by line (`hearth memory diff`): common prefix and suffix
// trimmed, an LCS table for the middle; past a size where that would be slow, the middle is shown
// as removed and added whole.
const CONTEXT = 3;
const MAX_CELLS = 4_000_000;

type Op = { kind: " " | "-" | "+"; line: string };

export function unifiedDiff(relPath: string, before: string | null, after: string | null): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = diffLines(a, b);
  if (!ops.some((o) => o.kind !== " ")) return "";
  const header = `--- ${before === null ? "/dev/null" : `a/${relPath}`}\n+++ ${after === null ? "/dev/null" : `b/${relPath}`}\n`;
  return header + hunks(ops).join("");
}

function splitLines(text: string | null): string[] {
  if (text === null || text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function diffLines(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle: Op[] = [];
  if (midA.length * midB.length > MAX_CELLS) {
    middle.push(...midA.map((line) => ({ kind: "-" as const, line })), ...midB.map((line) => ({ kind: "+" as const, line })));
  } else {
    // lcs[i][j]: the longest common subsequence of midA[i..] and midB[j..].
    const w = midB.length + 1;
    const lcs = new Uint32Array((midA.length + 1) * w);
    for (let i = midA.length - 1; i >= 0; i--) {
      for (let j = midB.length - 1; j >= 0; j--) {
        lcs[i * w + j] = midA[i] === midB[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
        middle.push({ kind: " ", line: midA[i++]! });
        j++;
      } else if (j < midB.length && (i === midA.length || lcs[i * w + j + 1]! > lcs[(i + 1) * w + j]!)) middle.push({ kind: "+", line: midB[j++]! });
      else middle.push({ kind: "-", line: midA[i++]! });
    }
  }
  return [...a.slice(0, start).map((line) => ({ kind: " " as const, line })), ...middle, ...a.slice(endA).map((line) => ({ kind: " " as const, line }))];
}

function hunks(ops: Op[]): string[] {
  const out: string[] = [];
  let i = 0;
  // Line numbers before each op, in a and in b.
  const posA: number[] = [];
  const posB: number[] = [];
  let na = 1;
  let nb = 1;
  for (const o of ops) {
    posA.push(na);
    posB.push(nb);
    if (o.kind !== "+") na++;
    if (o.kind !== "-") nb++;
  }
  while (i < ops.length) {
    if (ops[i]!.kind === " ") {
      i++;
      continue;
    }
    const from = Math.max(0, i - CONTEXT);
    let to = i;
    // Extend while the next change is within two contexts of this one.
    for (;;) {
      while (to < ops.length && ops[to]!.kind !== " ") to++;
      let next = to;
      while (next < ops.length && ops[next]!.kind === " ") next++;
      if (next < ops.length && next - to <= 2 * CONTEXT) to = next;
      else break;
    }
    const end = Math.min(ops.length, to + CONTEXT);
    const slice = ops.slice(from, end);
    const countA = slice.filter((o) => o.kind !== "+").length;
    const countB = slice.filter((o) => o.kind !== "-").length;
    const startA = countA === 0 ? posA[from]! - 1 : posA[from]!;
    const startB = countB === 0 ? posB[from]! - 1 : posB[from]!;
    out.push(`@@ -${startA},${countA} +${startB},${countB} @@\n${slice.map((o) => `${o.kind}${o.line}\n`).join("")}`);
    i = end;
  }
  return out;
}
