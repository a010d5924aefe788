// The Telegram path end to end. A gateway with the Telegram channel runs in its own process
// (like the daemon, and started with --expose-gc so its memory can be measured after a
// collection); the Bot API emulator and the fake model (zero delay) run here. Per DM:
//   - emulator send → request at the model
//   - model's last byte → final text at the emulator
// and the gateway's RSS growth over 100 sequential DMs after a warm-up.
//
// Both timestamps of each figure are taken in this process. The fake model writes a zero-delay
// reply in the same tick as it picks it, so "last byte" is taken when it picks the reply (an
// upper bound on the second figure by well under a millisecond). The emulator does not
// long-poll, so the channel re-polls it (every 10 ms at first, its default for such a server);
// real Telegram delivers through the open long poll instead.
//
// RSS includes V8's young generation, which V8 enlarges (32 → 64 → 128 MB of new space) as the
// session grows and each request allocates more; pages it touches stay resident. The heap
// figure, taken after a full collection, is what the gateway actually retains.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTelegramChannel } from "../src/channels/telegram/channel.ts";
import { parseConfig } from "../src/config/config.ts";
import { startGateway } from "../src/gateway/gateway.ts";
import { silentLogger } from "../src/process/log.ts";
import { startFakeModel, text, type FakeModel } from "../test/support/fake-model.ts";
import { startTelegramEmulator, type EmulatedUser, type TelegramEmulator } from "../test/support/telegram-emulator.ts";
import { percentile, round, type Figure } from "./harness.ts";

const OWNER = 100;
const WARMUP = 100;
const MEASURED = 100;
const REPLY_TIMEOUT_MS = 10_000;
/** Set in the gateway process this benchmark forks. */
const CHILD_ENV = "HEARTH_BENCH_TELEGRAM_GATEWAY";

interface ChildConfig {
  home: string;
  modelUrl: string;
  apiRoot: string;
  token: string;
}

type ToChild = { type: "memory" } | { type: "stop" };
type FromChild = { type: "ready" } | { type: "memory"; rss: number; heapUsed: number } | { type: "error"; message: string };

export async function telegramBench(): Promise<Figure[]> {
  const home = mkdtempSync(join(tmpdir(), "hearth-bench-telegram-"));
  let fake: FakeModel | undefined;
  let emu: TelegramEmulator | undefined;
  let child: GatewayProcess | undefined;
  try {
    fake = await startFakeModel();
    emu = await startTelegramEmulator();
    child = await forkGateway({ home, modelUrl: fake.url, apiRoot: emu.directApiRoot, token: emu.token });

    const dm = oneDm(fake, emu, emu.user({ userId: OWNER, firstName: "Ann" }));
    for (let i = 0; i < WARMUP; i++) await dm(i);
    const before = await child.memory();
    const toModel: number[] = [];
    const toFinal: number[] = [];
    for (let i = 0; i < MEASURED; i++) {
      const t = await dm(WARMUP + i);
      toModel.push(t.toModel);
      toFinal.push(t.toFinal);
    }
    const after = await child.memory();
    toModel.sort((a, b) => a - b);
    toFinal.sort((a, b) => a - b);
    const mb = (bytes: number) => round(bytes / (1024 * 1024), 1);

    return [
      { name: "telegram: emulator send → model request (p50)", value: round(percentile(toModel, 50)), unit: "ms", target: 20 },
      { name: "telegram: emulator send → model request (p95)", value: round(percentile(toModel, 95)), unit: "ms", target: 100 },
      { name: "telegram: model last byte → final text at emulator (p50)", value: round(percentile(toFinal, 50)), unit: "ms", target: 50 },
      { name: "telegram: model last byte → final text at emulator (p95)", value: round(percentile(toFinal, 95)), unit: "ms", target: 200 },
      { name: `telegram: gateway RSS growth over ${MEASURED} sequential DMs`, value: mb(after.rss - before.rss), unit: "MB", target: 10 },
      { name: `telegram: gateway heap growth over ${MEASURED} sequential DMs`, value: mb(after.heapUsed - before.heapUsed), unit: "MB", target: 10 },
    ];
  } finally {
    await child?.stop();
    await emu?.stop();
    await fake?.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** One owner DM and its answer; resolves with the two latencies in milliseconds. */
function oneDm(fake: FakeModel, emu: TelegramEmulator, user: EmulatedUser) {
  return async (i: number): Promise<{ toModel: number; toFinal: number }> => {
    let modelAt = 0;
    fake.enqueue({
      type: "respond",
      fn: () => {
        modelAt = performance.now();
        return text(`Answer **${i}**`);
      },
    });
    const final = `Answer <b>${i}</b>`;
    const finalAt = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        unsubscribe();
        reject(new Error(`no final text for DM ${i} within ${REPLY_TIMEOUT_MS} ms`));
      }, REPLY_TIMEOUT_MS);
      const unsubscribe = emu.onBotActivity((a) => {
        if (a.message.text !== final) return;
        clearTimeout(timer);
        unsubscribe();
        resolve(a.at);
      });
    });
    const sentAt = performance.now();
    await user.send(`Question number ${i}?`);
    const at = await finalAt;
    // The fake keeps every request; the benchmark needs none of them (and they grow with the session).
    fake.requests.length = 0;
    return { toModel: modelAt - sentAt, toFinal: at - modelAt };
  };
}

// ── the gateway process ──────────────────────────────────────────────────────────────────────

interface GatewayProcess {
  memory(): Promise<{ rss: number; heapUsed: number }>;
  stop(): Promise<void>;
}

function daemonNodeArgs(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { config?: { daemonNodeArgs?: string } };
  return (pkg.config?.daemonNodeArgs ?? "").split(/\s+/).filter(Boolean);
}

async function forkGateway(config: ChildConfig): Promise<GatewayProcess> {
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), [], {
    // The flags the daemon runs with (package.json config.daemonNodeArgs), plus gc for measuring.
    execArgv: ["--expose-gc", ...daemonNodeArgs()],
    env: { ...process.env, [CHILD_ENV]: JSON.stringify(config) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const next = (type: FromChild["type"]) =>
    new Promise<FromChild>((resolve, reject) => {
      const onMessage = (m: FromChild) => {
        if (m.type === "error") reject(new Error(`benchmark gateway: ${m.message}`));
        else if (m.type === type) resolve(m);
        else return;
        proc.off("message", onMessage);
      };
      proc.on("message", onMessage);
      void exited.then(() => reject(new Error("the benchmark gateway exited")));
    });
  await next("ready");
  const send = (m: ToChild) => proc.send(m);
  return {
    memory: async () => {
      const reply = next("memory");
      send({ type: "memory" });
      const m = (await reply) as Extract<FromChild, { type: "memory" }>;
      return { rss: m.rss, heapUsed: m.heapUsed };
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) send({ type: "stop" });
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function runGatewayProcess(raw: string): Promise<void> {
  const reply = (m: FromChild) => process.send!(m);
  try {
    const c = JSON.parse(raw) as ChildConfig;
    const config = parseConfig(
      {
        model: { apiKey: "bench-key", baseUrl: c.modelUrl },
        channels: { telegram: { token: c.token, apiRoot: c.apiRoot, ownerIds: [String(OWNER)] } },
      },
      { home: c.home, env: {} },
    );
    const channel = createTelegramChannel(config.channels.telegram!, { log: silentLogger });
    const gateway = await startGateway({ home: c.home, config, log: silentLogger, controlSocket: false, channels: [channel] });
    process.on("message", (m: ToChild) => {
      switch (m.type) {
        case "memory": {
          const gc = (globalThis as { gc?: () => void }).gc;
          gc?.();
          gc?.();
          const { rss, heapUsed } = process.memoryUsage();
          reply({ type: "memory", rss, heapUsed });
          return;
        }
        case "stop":
          void gateway.stop().finally(() => process.exit(0));
          return;
        default:
          m satisfies never;
      }
    });
    reply({ type: "ready" });
  } catch (err) {
    reply({ type: "error", message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  }
}

const childConfig = process.env[CHILD_ENV];
if (childConfig && process.send) await runGatewayProcess(childConfig);
