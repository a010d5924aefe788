// What the heartbeat costs on an idle day (issue 14): a real gateway with the default settings
// (every 30 minutes from 08:00 to 22:00, claude-haiku-4-5) runs 24 simulated hours on a fake
// clock; the fake model answers HEARTBEAT_OK and reports usage as the API would, with its prompt
// cache simulated (1-hour and 5-minute TTLs, Haiku 4.5's 4,096-token minimum). Priced at list
// prices. Scenarios: the default workspace; the same with 500 exchanges in main's transcript
// (from last week: an idle day has none); a large MEMORY.md whose prefix the 1-hour cache holds.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../src/agent/messages.ts";
import { Transcript } from "../src/agent/transcript.ts";
import { homePaths } from "../src/config/home.ts";
import { ensureHome } from "../src/config/init.ts";
import { silentLogger } from "../src/process/log.ts";
import { priceUsage } from "../src/spending/pricing.ts";
import { startFakeModel, text, type RecordedRequest } from "../test/support/fake-model.ts";
import { startTestGateway } from "../test/support/test-gateway.ts";
import { FakeTime } from "../test/scheduler/fakes.ts";
import { round, type Figure } from "./harness.ts";

interface DayTotals {
  calls: number;
  input: number;
  write5m: number;
  write1h: number;
  read: number;
  output: number;
  usd: number;
}

function price(reqs: RecordedRequest[]): DayTotals {
  const t: DayTotals = { calls: 0, input: 0, write5m: 0, write1h: 0, read: 0, output: 0, usd: 0 };
  for (const r of reqs) {
    const u = r.usage;
    if (!u) continue;
    const w5 = u.cache_creation?.ephemeral_5m_input_tokens ?? u.cache_creation_input_tokens;
    const w1 = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
    t.calls++;
    t.input += u.input_tokens;
    t.write5m += w5;
    t.write1h += w1;
    t.read += u.cache_read_input_tokens;
    t.output += u.output_tokens;
    // Hearth's own price table (list prices; 5-minute write 1.25× input, 1-hour write 2×, read 0.1×).
    t.usd += priceUsage(String(r.body.model), {
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      cacheReadTokens: u.cache_read_input_tokens,
      cacheCreationTokens: w5 + w1,
      cacheCreation5mTokens: w5,
      cacheCreation1hTokens: w1,
    });
  }
  return t;
}

/** 24 simulated hours of heartbeat ticks on `home`; returns every model request of the day. */
async function idleDay(home: string): Promise<RecordedRequest[]> {
  const time = new FakeTime("2026-11-23T00:00:00Z");
  const fake = await startFakeModel({ promptCache: { clock: time.clock } });
  fake.setDefault(text("HEARTBEAT_OK"));
  const { gateway, stop } = await startTestGateway(fake.url, { home, clock: time.clock, timers: time, schedule: true, config: { timezone: "UTC" } });
  try {
    for (let step = 0; step < 48; step++) {
      time.advance(30 * 60_000);
      while (gateway.context.lanes.snapshot().some((l) => l.running || l.queued > 0)) await new Promise((r) => setTimeout(r, 2));
    }
    return [...fake.requests];
  } finally {
    await stop();
    await fake.close();
  }
}

function freshHome(): string {
  const home = mkdtempSync(join(tmpdir(), "hearth-hb-bench-"));
  ensureHome(home, { workspace: join(home, "workspace") });
  return home;
}

function addExchanges(home: string, n: number): void {
  const at = Date.parse("2026-11-14T09:00:00Z");
  const t = Transcript.open(homePaths(home).sessionFile("main"), "main", silentLogger, () => at);
  for (let i = 0; i < n; i++) {
    const ts = at + i * 600_000;
    const asked: Message = { role: "user", kind: "message", text: `[2026-11-14 09:00 (Sat), UTC · telegram · Alice]\nCan you look up when the recycling is collected in our street this month, and note it? (${i})`, ts };
    const said: Message = {
      role: "assistant",
      content: [{ type: "text", text: `The recycling in your street is collected every second Tuesday; the next ones are on the 2nd and the 16th. I noted it in today's log, and I will mention it the evening before. (${i})` }],
      stop: "end_turn",
      model: "claude-sonnet-5-5",
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
      ts,
    };
    t.append({ type: "message", message: asked });
    t.append({ type: "message", message: said });
  }
}

const describeDay = (t: DayTotals) =>
  `${t.calls} calls; tokens: ${t.input} input, ${t.write1h} cache write 1h, ${t.write5m} cache write 5m, ${t.read} cache read, ${t.output} output`;

export async function heartbeatBench(): Promise<Figure[]> {
  const homes: string[] = [];
  try {
    const plain = freshHome();
    homes.push(plain);
    const a = price(await idleDay(plain));

    const talked = freshHome();
    homes.push(talked);
    addExchanges(talked, 500);
    const b = price(await idleDay(talked));

    const large = freshHome();
    homes.push(large);
    const notes = Array.from({ length: 200 }, (_, i) => `- Note ${i}: the owner's car is serviced at the garage on Mill Road; ask for Sam, bring the blue folder.`).join("\n");
    writeFileSync(join(large, "workspace", "MEMORY.md"), `# Memory\n\n${notes}\n`);
    const c = price(await idleDay(large));

    return [
      { name: `heartbeat idle day, default workspace, USD (${describeDay(a)})`, value: round(a.usd, 4), unit: "$", target: 0.05 },
      { name: `heartbeat idle day, 500-exchange main transcript, USD (${describeDay(b)})`, value: round(b.usd, 4), unit: "$", target: 0.05 },
      { name: `heartbeat idle day, 20 KB MEMORY.md (prefix over Haiku's cache minimum), USD (${describeDay(c)})`, value: round(c.usd, 4), unit: "$", target: 0.05 },
    ];
  } finally {
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  }
}
