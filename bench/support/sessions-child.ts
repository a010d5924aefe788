// Run by scale.bench.ts in its own process (RSS is per process): N group chats each say one
// thing through a gateway with memory on, then 31 minutes pass on a simulated clock and idle
// state is released. Prints one JSON line of figures. Needs --expose-gc.
import { readFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";
import { startTestGateway } from "../../test/support/test-gateway.ts";
import { startZeroModel } from "./zero-model.ts";

const chats = Number(process.argv[2] ?? 5000);
// A regular full collection before each reading, so garbage not yet collected is not counted;
// the daemon's own memory reduction after a release sweep is what the "after" figure measures.
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
let heapMb = 0;
const rssMb = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 200));
  }
  const m = process.memoryUsage();
  if (process.env.HEARTH_BENCH_VERBOSE) {
    const mb = (n: number) => (n / 1048576).toFixed(1);
    const spaces = getHeapSpaceStatistics().map((s) => `${s.space_name.replace("_space", "")} ${mb(s.space_used_size)}/${mb(s.physical_space_size)}`).join(", ");
    const status = readFileSync("/proc/self/status", "utf8");
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
    // Resident anonymous memory by mapping: [heap] is the main malloc arena; other arenas and V8's own pages are unnamed.
    const maps = readFileSync("/proc/self/smaps", "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
    const byKind = new Map<string, number>();
    for (const m of maps) {
      const name = m.split("\n")[0]!.split(/\s+/)[5] ?? "";
      if (name && !name.startsWith("[")) continue;
      const rss = Number(/\nRss:\s+(\d+)/.exec(m)?.[1] ?? 0) / 1024;
      const size = Number(/\nSize:\s+(\d+)/.exec(m)?.[1] ?? 0) / 1024;
      const kind = name || (size === 0.25 ? "anon 256K (V8 pages)" : size < 1 ? "anon <1MB" : size < 64 ? "anon 1-64MB" : "anon >=64MB");
      byKind.set(kind, (byKind.get(kind) ?? 0) + rss);
    }
    if (process.env.HEARTH_BENCH_MAPS) {
      const top = maps.map((m) => ({ head: m.split("\n")[0]!, rss: Number(/\nRss:\s+(\d+)/.exec(m)?.[1] ?? 0) / 1024, size: Number(/\nSize:\s+(\d+)/.exec(m)?.[1] ?? 0) / 1024 })).sort((a, b) => b.rss - a.rss).slice(0, 12);
      for (const t of top) process.stderr.write(`    ${t.rss.toFixed(1)} of ${t.size.toFixed(1)} MB  ${t.head}\n`);
    }
    process.stderr.write(`  RssAnon ${kb("RssAnon").toFixed(1)} RssFile ${kb("RssFile").toFixed(1)}; ${[...byKind].map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")}\n`);
    process.stderr.write(`heap ${mb(m.heapUsed)} MB, heapTotal ${mb(m.heapTotal)} MB, external ${mb(m.external)} MB, arrayBuffers ${mb(m.arrayBuffers)} MB, rss ${mb(m.rss)} MB\n  spaces used/physical: ${spaces}\n`);
  }
  heapMb = m.heapUsed / 1024 / 1024;
  return m.rss / 1024 / 1024;
};
let now = Date.UTC(2026, 10, 23, 10);
const model = await startZeroModel("ok");
const t = await startTestGateway(model.url, { memory: process.env.NO_MEMORY !== "1", clock: () => now, telegram: { groups: { policy: "open", requireMention: false } }, config: { agent: { maxConcurrentRuns: 8 } } });
const memory = t.gateway.context.runtime.memory ?? { watchedFolders: () => 0 };
const say = (i: number) =>
  new Promise<void>((resolve) => {
    const id = t.channel.say({ chat: `-100${i}`, type: "group", sender: "7", text: `hello from group ${i}`, id: `m${i}` });
    const poll = () => (t.channel.replies.has(id) ? resolve() : setTimeout(poll, 5));
    poll();
  });
// A few chats first, so that "idle" has the code paths warm.
for (let i = 0; i < 20; i++) await say(i);
now += 31 * 60_000;
t.gateway.context.runtime.releaseIdle();
await new Promise((r) => setTimeout(r, 1000));
const idle = await rssMb();
const heapIdle = heapMb;
const watchedAtFew = memory.watchedFolders();
for (let i = 20; i < chats; i += 50) await Promise.all(Array.from({ length: Math.min(50, chats - i) }, (_, k) => say(i + k)));
await new Promise((r) => setTimeout(r, 1000));
const busy = await rssMb();
const held = t.gateway.context.runtime.sessionsInMemory();
const watchedAtMany = memory.watchedFolders();
now += 31 * 60_000;
const released = t.gateway.context.runtime.releaseIdle();
const after = await rssMb();
const heapAfter = heapMb;
await t.stop();
await model.close();
process.stdout.write(`${JSON.stringify({ idle, busy, after, held, released, watchedAtFew, watchedAtMany, heapIdle, heapAfter })}\n`);
