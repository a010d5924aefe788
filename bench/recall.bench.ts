// Recall of memory_search over a synthetic year (bench/recall/generate.ts): recall@5 and latency
// for keywords alone and for hybrid recall, with the deterministic local embedding stand-in
// (test/support/fake-embeddings.ts, on loopback) — or a real endpoint when
// HEARTH_BENCH_EMBEDDINGS_URL and HEARTH_BENCH_EMBEDDINGS_MODEL are set (key:
// HEARTH_BENCH_EMBEDDINGS_KEY), e.g. Ollama's http://127.0.0.1:11434/v1 with nomic-embed-text.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/process/log.ts";
import { HybridSearch } from "../src/memory/search/hybrid.ts";
import { SearchIndex, type SearchHit } from "../src/memory/search/search-index.ts";
import { startFakeEmbeddings } from "../test/support/fake-embeddings.ts";
import { percentile, round, type Figure } from "./harness.ts";
import { generateYear, type Question } from "./recall/generate.ts";

export async function recallBench(): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-recall-"));
  const real = process.env.HEARTH_BENCH_EMBEDDINGS_URL && process.env.HEARTH_BENCH_EMBEDDINGS_MODEL;
  const fake = real ? null : await startFakeEmbeddings();
  const config = real
    ? { baseUrl: process.env.HEARTH_BENCH_EMBEDDINGS_URL!, model: process.env.HEARTH_BENCH_EMBEDDINGS_MODEL!, ...(process.env.HEARTH_BENCH_EMBEDDINGS_KEY ? { apiKey: process.env.HEARTH_BENCH_EMBEDDINGS_KEY } : {}) }
    : { baseUrl: fake!.baseUrl, model: "stand-in" };
  const index = SearchIndex.open(join(dir, "index", "memory.db"), silentLogger);
  const hybrid = HybridSearch.open({ index, file: join(dir, "index", "vectors.db"), config, log: silentLogger });
  try {
    const workspace = join(dir, "workspace");
    const questions = generateYear(workspace);
    index.reconcile(workspace);
    const chunks = index.chunks().length;
    const start = performance.now();
    await hybrid.pass();
    const embedMs = performance.now() - start;
    const keyword = await score(questions, async (q) => index.search(q, { kind: "main" }, 5));
    const fused = await score(questions, (q) => hybrid.search(q, { kind: "main" }, 5));
    const tag = real ? config.model : "stand-in";
    process.stderr.write(`recall: ${chunks} chunks, ${questions.length} questions, embeddings ${tag}\n`);
    return [
      { name: "recall@5 keywords (all)", value: keyword.all, unit: "%", target: 0, better: "higher" },
      { name: "recall@5 keywords (paraphrases)", value: keyword.paraphrase, unit: "%", target: 0, better: "higher" },
      { name: `recall@5 hybrid, ${tag} (all)`, value: fused.all, unit: "%", target: keyword.all, better: "higher" },
      { name: `recall@5 hybrid, ${tag} (paraphrases)`, value: fused.paraphrase, unit: "%", target: 50, better: "higher" },
      { name: "search p50 keywords", value: keyword.p50, unit: "ms", target: 50 },
      { name: `search p50 hybrid, ${tag}`, value: fused.p50, unit: "ms", target: 200 },
      { name: `embedding ${chunks} chunks, ${tag}`, value: round(embedMs / 1000, 1), unit: "s", target: 120 },
    ];
  } finally {
    hybrid.close();
    index.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function score(questions: Question[], search: (q: string) => Promise<SearchHit[]>) {
  const times: number[] = [];
  let all = 0;
  let paraphrase = 0;
  for (const q of questions) {
    const start = performance.now();
    const hits = await search(q.text);
    times.push(performance.now() - start);
    if (!hits.some((h) => h.path === q.answer)) continue;
    all++;
    if (q.kind === "paraphrase") paraphrase++;
  }
  const paraphrases = questions.filter((q) => q.kind === "paraphrase").length;
  times.sort((a, b) => a - b);
  return { all: round((100 * all) / questions.length, 0), paraphrase: round((100 * paraphrase) / paraphrases, 0), p50: round(percentile(times, 50), 1) };
}
