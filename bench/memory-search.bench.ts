// memory_search over ten years of daily logs: 3,650 files, 100,000 chunks, indexed from disk by
// reconcile, then searched with a mix of queries in the main scope and in a group's scope.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/process/log.ts";
import { chunkMarkdown } from "../src/memory/search/chunker.ts";
import { SearchIndex } from "../src/memory/search/search-index.ts";
import type { MemoryScope } from "../src/memory/visibility.ts";
import { measure, percentile, round, type Figure } from "./harness.ts";

const DAYS = 3650;
const CHUNKS = 100_000;
const GROUP_CHAT = "telegram_-1001234";

const COMMON = (
  "the a and to of in for on with at from about today tomorrow week morning evening call meeting project " +
  "work email plan trip train flight hotel dinner lunch coffee book read write code review bug fix deploy " +
  "server budget invoice doctor dentist appointment gym run walk garden kids school birthday gift family " +
  "friend weekend holiday weather rain sun car repair bank tax insurance rent house kitchen paint shopping " +
  "groceries recipe cook bake movie music concert ticket price order delivery package note idea remember " +
  "check send reply update finish start move cancel confirm schedule"
).split(" ");
const RARE = (
  "kilimanjaro zanzibar quokka okapi marimba sourdough kombucha ptolemy saxophone tessellate " +
  "bergamot juniper lighthouse origami fjord tamarind vermillion obsidian ukulele zeppelin"
).split(" ");
const PEOPLE = ["Alice", "Bob", "Carla", "Deniz", "Emeka", "Fatima", "Goran", "Hana"];

export async function memorySearchBench(): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-memory-"));
  try {
    const workspace = join(dir, "workspace");
    writeWorkspace(workspace);
    const index = SearchIndex.open(join(dir, "index", "memory.db"), silentLogger);
    try {
      let start = performance.now();
      const built = index.reconcile(workspace);
      const buildMs = performance.now() - start;
      const files = DAYS + 1 + DAYS / 10;
      if (built.added !== files) throw new Error(`expected ${files} files indexed, got ${built.added}`);
      start = performance.now();
      index.reconcile(workspace);
      const rescanMs = performance.now() - start;

      const queries = [
        "meeting",
        "dentist appointment",
        "what did Alice say about the trip to Kilimanjaro?",
        "sourdough recipe",
        "quokka",
        "invoice budget tax",
        "xyzzy plugh",
        "running",
        "Bob's birthday gift",
        "train hotel flight weekend",
      ];
      const main: MemoryScope = { kind: "main" };
      const group: MemoryScope = { kind: "shared", chat: GROUP_CHAT };
      for (const q of queries) index.search(q, main); // warm the page cache
      let i = 0;
      const mainTimes = await measure(queries.length * 40, () => index.search(queries[i++ % queries.length]!, main));
      i = 0;
      const groupTimes = await measure(queries.length * 20, () => index.search(queries[i++ % queries.length]!, group));
      return [
        { name: "memory index build from disk, 100,000 chunks", value: round(buildMs / 1000, 1), unit: "s", target: 30 },
        { name: "memory index startup reconcile, nothing changed", value: round(rescanMs), unit: "ms", target: 500 },
        { name: "memory_search over 100,000 chunks (p50)", value: round(percentile(mainTimes, 50)), unit: "ms", target: 10 },
        { name: "memory_search over 100,000 chunks (p99)", value: round(percentile(mainTimes, 99)), unit: "ms", target: 50 },
        { name: "memory_search, group scope, 100,000 chunks (p50)", value: round(percentile(groupTimes, 50)), unit: "ms", target: 10 },
        { name: "memory_search, group scope, 100,000 chunks (p99)", value: round(percentile(groupTimes, 99)), unit: "ms", target: 50 },
      ];
    } finally {
      index.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * DAYS daily logs whose entries (one chunk each) add up to CHUNKS with MEMORY.md, plus one
 * group chat's log every tenth day (outside the count: they are what the group scope sees).
 */
function writeWorkspace(workspace: string): void {
  const random = mulberry32(42);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  // Zipf-like: early words of COMMON are far more frequent than late ones.
  const word = (): string => (random() < 0.01 ? pick(RARE) : COMMON[Math.floor(COMMON.length * random() ** 2)]!);
  const sentence = (min: number, max: number): string => {
    const n = min + Math.floor(random() * (max - min));
    const words = Array.from({ length: n }, word);
    if (random() < 0.3) words.splice(Math.floor(random() * n), 0, pick(PEOPLE));
    return `${words.join(" ")}.`;
  };
  const entry = (minute: number): string => {
    const time = `${String(Math.floor(minute / 60) % 24).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;
    return `### ${time} · telegram · Owner\n> ${sentence(4, 20)}\n\n${sentence(10, 60)} ${sentence(5, 30)}\n\n`;
  };

  mkdirSync(join(workspace, "memory", "chats", GROUP_CHAT), { recursive: true });
  const memory = `# Memory\n\n## Facts\n${Array.from({ length: 50 }, () => `- ${sentence(60, 90)}`).join("\n\n")}\n`;
  writeFileSync(join(workspace, "MEMORY.md"), memory);

  let counted = chunkMarkdown(memory).length;
  let remaining = CHUNKS - chunkMarkdown(memory).length;
  const day0 = Date.UTC(2016, 0, 1);
  for (let d = 0; d < DAYS; d++) {
    const date = new Date(day0 + d * 86_400_000).toISOString().slice(0, 10);
    const entries = Math.round(remaining / (DAYS - d));
    remaining -= entries;
    let text = `# ${date}\n\n`;
    for (let e = 0; e < entries; e++) text += entry(420 + e * 30);
    writeFileSync(join(workspace, "memory", `${date}.md`), text);
    counted += chunkMarkdown(text).length;
    if (d % 10 === 0) {
      let chat = `# ${date}\n\n`;
      for (let e = 0; e < 5; e++) chat += entry(600 + e * 7).replace("Owner", pick(PEOPLE));
      writeFileSync(join(workspace, "memory", "chats", GROUP_CHAT, `${date}.md`), chat);
    }
  }
  if (counted !== CHUNKS) throw new Error(`generated ${counted} chunks, expected ${CHUNKS}`);
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
