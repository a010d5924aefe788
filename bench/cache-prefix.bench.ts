// How much of each request the prompt cache can reuse (issue 8): across a scripted 20-run main
// session with tool loops, the share of a request's bytes that repeats the previous request's
// prefix, in the order the API caches (tools, system, messages), without the moving markers.
import { startFakeModel, text, toolCall, type RecordedRequest } from "../test/support/fake-model.ts";
import { startTestGateway } from "../test/support/test-gateway.ts";
import { round, type Figure } from "./harness.ts";

/** The request as the cache sees it: tools, system, then messages, cache_control removed. */
function cacheView(req: RecordedRequest): string {
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== "cache_control").map(([k, x]) => [k, strip(x)])) : v;
  return JSON.stringify(strip(req.body.tools ?? [])) + JSON.stringify(strip(req.body.system)) + JSON.stringify(strip(req.body.messages));
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export async function cachePrefixBench(): Promise<Figure[]> {
  const fake = await startFakeModel();
  const { channel, stop } = await startTestGateway(fake.url);
  try {
    for (let run = 0; run < 20; run++) {
      // A tool loop of one to three steps, then an answer.
      const steps = 1 + (run % 3);
      for (let s = 0; s < steps; s++) fake.enqueue(toolCall("exec", { command: `ls -la notes/${run}-${s} 2>/dev/null; echo checked ${run}-${s}` }));
      fake.enqueue(text(`Run ${run}: I checked ${steps} place${steps > 1 ? "s" : ""}; everything is in order, and the notes are where you left them.`));
      const id = channel.say({ chat: "1", type: "dm", sender: "1", text: `Please check my notes for item ${run} and tell me if anything is missing.` });
      while (!channel.replies.has(id)) await new Promise((r) => setTimeout(r, 5));
    }
    const views = fake.requests.map(cacheView);
    let reused = 0;
    let total = 0;
    const shares: number[] = [];
    for (let i = 1; i < views.length; i++) {
      const same = commonPrefix(views[i - 1]!, views[i]!);
      reused += same;
      total += views[i]!.length;
      shares.push(same / views[i]!.length);
    }
    shares.sort((a, b) => a - b);
    return [
      { name: "cacheable prefix, 20-run session with tool loops (share of bytes)", value: round(reused / total, 3), unit: "", target: 0.95, better: "higher" },
      { name: "cacheable prefix, lowest single request", value: round(shares[0]!, 3), unit: "", target: 0.9, better: "higher" },
    ];
  } finally {
    await stop();
    await fake.close();
  }
}
