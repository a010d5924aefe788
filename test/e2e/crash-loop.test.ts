// A crash loop: the real daemon is killed with SIGKILL twenty times at random points while
// messages stream, run tools and wait in the queue. Afterwards every message is answered exactly
// once, or given up with a notice after two runs of it started; no stale preview is left in the
// chat; every state file parses.
//
// The one stale message Hearth cannot prevent is a message Telegram created in the instant before
// the daemon recorded its id (the Bot API has no idempotent send): the kill lands between the
// platform applying the send and the outbox's fsync. Such a message is allowed only if its id
// never reached outbox.jsonl at any point of the run; every recorded preview must be gone.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { InboxRecordSchema } from "../../src/gateway/inbox.ts";
import { OutboxRecordSchema } from "../../src/gateway/outbox.ts";
import { GIVEN_UP_TEXT } from "../../src/gateway/recovery.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, requestText, startFakeModel, text, toolCall, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const KILLS = 20;
const MESSAGES = 10;
const FILLER = "The details follow in a few plain words so that the answer streams for a while.";
const answerFor = (n: number) => `Answer to m${n}. ${FILLER}`;

let fake: FakeModel;
let emu: TelegramEmulator;
let daemons: Daemon[];
let home: string;

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  daemons = [];
});
afterEach(async () => {
  for (const d of daemons) if (d.proc.exitCode === null && d.proc.signalCode === null) await kill9(d);
  await cleanupDaemon(undefined, home);
  await emu.stop();
  await fake.close();
});

async function kill9(d: Daemon): Promise<void> {
  d.proc.kill("SIGKILL");
  await d.exited;
}

/** The message a request starts a run for: the last `mN` the user wrote in its last turn. */
function messageOf(req: RecordedRequest): number | undefined {
  const texts = lastUserContent(req).map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : ""));
  const all = [...texts.join("\n").matchAll(/\bm(\d+): question/g)];
  return all.length ? Number(all.at(-1)![1]) : undefined;
}

const isToolResult = (req: RecordedRequest) => lastUserContent(req).some((b) => b.type === "tool_result");

/** A small seeded generator, so a failing run can be repeated. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function jsonLines(path: string): unknown[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);
}

it(`${KILLS} kill -9s at random points: every message answered exactly once or given up with a notice, no stale preview`, async () => {
  const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
  const rand = random(seed);
  home = makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], queueMode: "followup" } } });
  // Odd messages run a tool first; every answer streams for about half a second.
  fake.setDefault({
    type: "respond",
    fn: (req) => {
      // The message being answered: the latest one in the conversation (a tool continuation
      // carries only the tool's result in its last turn).
      const n = Number([...requestText(req).matchAll(/\bm(\d+): question/g)].at(-1)?.[1] ?? -1);
      if (n % 2 === 1 && !isToolResult(req)) return toolCall("exec", { command: "sleep 0.3" });
      return text(answerFor(n), { chunkSize: 8, chunkDelayMs: 25 });
    },
  });
  const env = { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url };
  const start = async () => {
    const d = await startDaemon(home, env);
    daemons.push(d);
    await waitFor("telegram polling", () => d.log().includes("telegram.polling"));
    return d;
  };
  const user = emu.user({ userId: OWNER, firstName: "Ann" });
  const sent: Array<{ n: number; id: string }> = [];
  // Every platform message id the outbox recorded, read after each kill (start-up compacts it).
  const recorded = new Set<string>();
  const noteRecorded = () => {
    for (const r of jsonLines(join(home, "outbox.jsonl"))) {
      const rec = r as { type?: string; id?: string };
      if (rec.type === "message" && rec.id) recorded.add(rec.id);
    }
  };

  for (let kill = 0; kill < KILLS; kill++) {
    const d = await start();
    if (sent.length < MESSAGES) {
      const n = sent.length;
      sent.push({ n, id: `telegram:${OWNER}:${await user.send(`m${n}: question number ${n}`)}` });
    }
    await sleep(150 + rand() * 1200);
    await kill9(d);
    noteRecorded();
  }

  const last = await start();
  const logs = () => daemons.map((d) => d.log()).join("\n");
  const abandoned = () => new Set([...logs().matchAll(/"event":"inbox\.abandoned"[^\n]*?"id":"([^"]+)"/g)].map((m) => m[1]!));
  const finals = new Set([...sent.map((s) => answerFor(s.n)), GIVEN_UP_TEXT]);
  // Bot messages that are neither an answer nor the notice: stale. Those whose id the outbox
  // never recorded were created in the unrecordable instant before a kill.
  const stale = () => emu.botMessages(OWNER).filter((m) => !finals.has(m.text));
  const unexplained = () => {
    noteRecorded();
    return stale().filter((m) => recorded.has(String(m.messageId)));
  };
  const settled = () => {
    const given = abandoned();
    const texts = emu.botMessages(OWNER).map((m) => m.text);
    return sent.every((s) => given.has(s.id) || texts.includes(answerFor(s.n))) && unexplained().length === 0;
  };
  await waitFor(`every message answered or given up (seed ${seed})`, settled, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\nbot: ${JSON.stringify(emu.botMessages(OWNER).map((m) => m.text))}\nlog:\n${last.log().slice(-4000)}`);
  });
  await sleep(1000);

  const given = abandoned();
  const unrecorded = stale();
  expect(unexplained(), `seed ${seed}: a preview whose id was recorded stayed in the chat`).toEqual([]);
  expect(unrecorded.length, `seed ${seed}: at most one unrecorded message per kill`).toBeLessThanOrEqual(KILLS);
  const texts = emu.botMessages(OWNER).map((m) => m.text).filter((t) => finals.has(t));
  const context = `seed ${seed}; bot messages: ${JSON.stringify(texts)}; given up: ${[...given].join(", ")}`;
  for (const s of sent) {
    const answers = texts.filter((t) => t === answerFor(s.n)).length;
    if (given.has(s.id)) {
      expect(answers, context).toBe(0);
      // Given up only after two runs of it started (each reached the step that sends its model
      // request), and the model did see it: a message that only waited is never given up. (A
      // kill between that step and the request reaching the model, a few milliseconds, is
      // counted as an attempt the model did not see.)
      const started = [...logs().matchAll(/"event":"inbox\.started"[^\n]*?"id":"([^"]+)"/g)].filter((m) => m[1] === s.id).length;
      expect(started, context).toBeGreaterThanOrEqual(2);
      expect(fake.requests.filter((r) => messageOf(r) === s.n).length, context).toBeGreaterThanOrEqual(1);
    } else {
      expect(answers, context).toBe(1);
    }
  }
  expect(texts.filter((t) => t === GIVEN_UP_TEXT).length, context).toBe(given.size);
  expect(texts, context).toHaveLength(sent.length);

  // Every state file parses, line by line, and the inbox and outbox lines have their schema's shape.
  for (const line of jsonLines(join(home, "inbox.jsonl"))) expect(InboxRecordSchema.safeParse(line).success, JSON.stringify(line)).toBe(true);
  for (const line of jsonLines(join(home, "outbox.jsonl"))) expect(OutboxRecordSchema.safeParse(line).success, JSON.stringify(line)).toBe(true);
  for (const f of readdirSync(join(home, "sessions"))) {
    if (f.endsWith(".jsonl")) jsonLines(join(home, "sessions", f));
    else if (f.endsWith(".json")) JSON.parse(readFileSync(join(home, "sessions", f), "utf8"));
  }
  // A clean stop and start has nothing left to recover.
  expect(await last.stop()).toBe(0);
  const again = await start();
  await sleep(300);
  expect(again.log()).not.toContain("inbox.recovering");
  console.info(
    `crash loop: seed ${seed}, ${sent.length} messages, ${given.size} given up, ${fake.requests.length} model requests, ${unrecorded.length} message(s) sent in the unrecordable instant before a kill`,
  );
}, 180_000);
