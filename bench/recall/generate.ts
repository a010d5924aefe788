// A synthetic year of memory for the recall benchmark: 365 daily logs of everyday entries (a few
// thousand chunks) and a MEMORY.md, with 50 facts planted on chosen days and 50 labelled
// questions — half asked with the fact's own words, half paraphrased with synonyms only (no
// content word in common), the kind keyword search misses. Deterministic: same files every run.
//   node bench/recall/generate.ts DIR   writes the workspace into DIR and prints the questions
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SYNONYMS } from "../../test/support/fake-embeddings.ts";

export interface Question {
  text: string;
  /** The file (relative to the workspace) that holds the answer. */
  answer: string;
  kind: "keyword" | "paraphrase";
}

const FILLER = (
  "call meeting project email plan train hotel lunch coffee book read write code review bug deploy server budget " +
  "invoice appointment gym run walk school birthday gift family friend weekend weather rain sun bank tax insurance " +
  "rent kitchen paint groceries recipe cook bake music concert ticket price order delivery package note idea " +
  "check send reply update finish move cancel confirm schedule"
).split(" ");
const PLACES = ["Lisbon", "Porto", "Ghent", "Bergen", "Tartu", "Graz", "Turku", "Split", "Cork", "Lyon"];

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const dateOf = (day: number): string => new Date(Date.UTC(2025, 0, 1 + day)).toISOString().slice(0, 10);

export function generateYear(workspace: string): Question[] {
  const rnd = random(31);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const entries = new Map<number, string[]>();
  for (let day = 0; day < 365; day++) {
    const list: string[] = [];
    for (let e = 0; e < 8; e++) list.push(Array.from({ length: 14 }, () => pick(FILLER)).join(" "));
    entries.set(day, list);
  }
  const questions: Question[] = [];
  for (let i = 0; i < 50; i++) {
    // Three meanings, each said one way in the fact and another way in a paraphrase.
    const groups = new Set<number>();
    while (groups.size < 3) groups.add(Math.floor(rnd() * SYNONYMS.length));
    const words = [...groups].map((g) => SYNONYMS[g]!);
    const place = PLACES[i % PLACES.length]!;
    const day = Math.floor(rnd() * 365);
    const fact = `${words.map((w) => w[1]!).join(" and ")} near ${place}, remember this one`;
    entries.get(day)!.splice(Math.floor(rnd() * 8), 0, fact);
    const answer = `memory/${dateOf(day)}.md`;
    questions.push(
      i % 2 === 0
        ? { text: `${words[0]![1]} ${words[1]![1]} ${place}`, answer, kind: "keyword" }
        : { text: words.map((w) => w.find((x, j) => j !== 1 && x !== w[1]) ?? w[0]!).join(" "), answer, kind: "paraphrase" },
    );
  }
  for (const [day, list] of entries) {
    const file = join(workspace, "memory", `${dateOf(day)}.md`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `# ${dateOf(day)}\n\n${list.map((e, n) => `### ${String(8 + n).padStart(2, "0")}:00 · terminal · owner\n> ${e}\n`).join("\n")}`);
  }
  writeFileSync(join(workspace, "MEMORY.md"), `# Memory\n\n${FILLER.slice(0, 40).map((w) => `- ${w} ${pick(FILLER)} ${pick(FILLER)}`).join("\n")}\n`);
  return questions;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write("usage: node bench/recall/generate.ts DIR\n");
    process.exit(2);
  }
  for (const q of generateYear(dir)) process.stdout.write(`${q.kind}\t${q.answer}\t${q.text}\n`);
}
