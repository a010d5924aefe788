// Gateway overhead and load (issue 4): an in-process gateway, a zero-latency model, and the test
// channel, which injects messages and times replies.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Gateway } from "../src/gateway/gateway.ts";
import type { TestChannel } from "../test/support/test-channel.ts";
import { startTestGateway } from "../test/support/test-gateway.ts";
import { appendDurable } from "../src/state/storage.ts";
import { measure, percentile, round, type Figure } from "./harness.ts";
import { startZeroModel } from "./support/zero-model.ts";

type ZeroModel = Awaited<ReturnType<typeof startZeroModel>>;

/** The gateway alone: no workspace memory, so the figures are the gateway's own overhead. */
async function withGateway<T>(telegram: Record<string, unknown>, fn: (channel: TestChannel, model: ZeroModel, gateway: Gateway, home: string) => Promise<T>): Promise<T> {
  const model = await startZeroModel();
  const test = await startTestGateway(model.url, { telegram, memory: false });
  try {
    return await fn(test.channel, model, test.gateway, test.home);
  } finally {
    await test.stop();
    await model.close();
  }
}

const until = async (check: () => boolean, what: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`benchmark timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

/** accepted → request at the model, and model's last byte → reply handed to the channel. */
async function overhead(): Promise<Figure[]> {
  return withGateway({}, async (channel, model) => {
    const inbound: number[] = [];
    const outbound: number[] = [];
    const total = 1_000;
    for (let i = 0; i < total + 50; i++) {
      // A fresh conversation every 25 messages keeps the history (and request size) realistic.
      if (i % 25 === 0) {
        const id = `reset${i}`;
        channel.say({ id, chat: "1", type: "dm", sender: "1", text: "/new" });
        await until(() => channel.replies.has(id), "/new");
      }
      const id = `m${i}`;
      const before = model.arrivals.length;
      const t0 = performance.now();
      channel.say({ id, chat: "1", type: "dm", sender: "1", text: `message ${i}` });
      await until(() => channel.replies.has(id), `reply ${i}`);
      if (i < 50) continue; // warm-up
      inbound.push(model.arrivals[before]! - t0);
      outbound.push(channel.repliedAt.get(id)! - model.lastBytes[before]!);
    }
    inbound.sort((a, b) => a - b);
    outbound.sort((a, b) => a - b);
    return [
      { name: "gateway overhead in: accepted → model request (p50)", value: round(percentile(inbound, 50), 3), unit: "ms", target: 2 },
      { name: "gateway overhead in (p99)", value: round(percentile(inbound, 99), 3), unit: "ms", target: 10 },
      { name: "gateway overhead out: last model byte → reply handed over (p50)", value: round(percentile(outbound, 50), 3), unit: "ms", target: 2 },
      { name: "gateway overhead out (p99)", value: round(percentile(outbound, 99), 3), unit: "ms", target: 10 },
    ];
  });
}

/**
 * 200 sessions × 10 messages at once. A message that arrives while its chat's run is active
 * joins that run (one reply answers the chat), so "lost" and "answered twice" are counted where
 * they would show: every message must reach the model exactly once (in its session's
 * transcript), every inbox entry must be done, and every chat must get a reply.
 */
async function load(): Promise<Figure[]> {
  return withGateway({ groups: { policy: "open", requireMention: false } }, async (channel, _model, gateway, home) => {
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const sessions = 200;
    const perSession = 10;
    for (let r = 0; r < perSession; r++) {
      for (let s = 0; s < sessions; s++) {
        channel.say({ id: `g${s}-${r}`, chat: `-100${s}`, type: "group", sender: String(1000 + s), text: `load message ${s}/${r}` });
      }
    }
    const idle = () => gateway.context.inbox.pending().length === 0 && gateway.status().activeRuns === 0;
    await until(idle, "every message to be answered", 120_000);
    clearInterval(sampler);

    let lost = 0;
    let twice = 0;
    for (let s = 0; s < sessions; s++) {
      const userTexts = readFileSync(join(home, "sessions", `group:telegram:-100${s}.jsonl`), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; message?: { role: string; text?: string } })
        .filter((r) => r.type === "message" && r.message?.role === "user")
        .map((r) => r.message!.text ?? "");
      for (let r = 0; r < perSession; r++) {
        const seen = userTexts.filter((t) => t.endsWith(`\nload message ${s}/${r}`)).length;
        if (seen === 0) lost++;
        if (seen > 1) twice++;
      }
    }
    const unanswered = [...Array(sessions).keys()].filter((s) => ![...channel.replies.keys()].some((id) => id.startsWith(`g${s}-`))).length;
    return [
      { name: "200 sessions × 10 messages: lost", value: lost + unanswered, unit: "msgs", target: 1 },
      { name: "200 sessions × 10 messages: answered twice", value: twice, unit: "msgs", target: 1 },
      { name: "200 sessions × 10 messages: peak RSS", value: round(peak / 1024 / 1024, 1), unit: "MB", target: 200 },
    ];
  });
}

/** Runs `load` in a fresh process, as a daemon would be: its RSS is not the benchmark runner's. */
function loadInChild(): Promise<Figure[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--load"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out) as Figure[]) : reject(new Error(`load benchmark exited with ${code}`))));
  });
}

/**
 * What durability costs: one inbox/outbox record appended with fsync (appendDurable) against
 * the same append without it, in the benchmark's temp folder (on this machine's disk). An
 * answered message writes three fsynced records: accepted, its preview's id, its final text
 * (`started`, `done` and `delivered` are plain appends).
 */
async function durability(): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-fsync-"));
  try {
    const record = `${JSON.stringify({ type: "accepted", entry: { id: "telegram:1:1", sessionKey: "main", text: "x".repeat(300) } })}\n`;
    const plain = await measure(500, () => appendFileSync(join(dir, "plain.jsonl"), record));
    const durable = await measure(500, () => appendDurable(join(dir, "durable.jsonl"), record));
    return [
      { name: "inbox/outbox record append without fsync (p50)", value: round(percentile(plain, 50), 3), unit: "ms", target: 1 },
      { name: "inbox/outbox record append with fsync (p50)", value: round(percentile(durable, 50), 3), unit: "ms", target: 10 },
      { name: "inbox/outbox record append with fsync (p99)", value: round(percentile(durable, 99), 3), unit: "ms", target: 100 },
      { name: "fsync cost per answered message (3 records, p50)", value: round(3 * (percentile(durable, 50) - percentile(plain, 50)), 3), unit: "ms", target: 40 },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function gatewayBench(): Promise<Figure[]> {
  return [...(await overhead()), ...(await durability()), ...(await loadInChild())];
}

if (process.argv.includes("--durability")) {
  for (const f of await durability()) process.stdout.write(`${f.name}: ${f.value} ${f.unit}\n`);
}

if (process.argv.includes("--load")) {
  process.stdout.write(JSON.stringify(await load()));
}
