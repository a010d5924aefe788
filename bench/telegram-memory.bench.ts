// Memory as a user sees it: the real daemon (`hearth start` with the node arguments it runs
// with), Telegram on (the Bot API emulator), the fake model at zero delay. RSS from
// /proc/PID/status, no forced collection, from a cold start:
//   - idle: ready, and two seconds of polling Telegram with nothing to answer
//   - after the first 20 answers, and after 200 (sequential owner DMs, each waited for), each
//     once the daemon has been quiet for 5 s: the moment a user would look, after the one
//     collection the daemon runs when it falls quiet (gateway/upkeep/memory-reducer.ts)
//   - idle again from a cold start with the dashboard enabled but never opened (its pages load
//     on the first request, so it should cost next to nothing)
// Beside it the floor: `node -e` holding an idle HTTP server, on the same Node.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startTelegramEmulator, type EmulatedUser, type TelegramEmulator } from "../test/support/telegram-emulator.ts";
import { round, type Figure } from "./harness.ts";
import { DAEMON_ENV } from "../src/process/daemon-env.ts";
import { daemonNodeArgs } from "./support/daemon-args.ts";
import { startZeroModel } from "./support/zero-model.ts";

const OWNER = 100;
const REPLY = "Noted.";
const REPLY_TIMEOUT_MS = 30_000;
/** Quiet time before a figure after answers: longer than the memory reducer's 3 s. */
const SETTLE_MS = 5_000;
const bin = fileURLToPath(new URL("../bin/hearth.js", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

export async function telegramMemoryBench(): Promise<Figure[]> {
  const model = await startZeroModel(REPLY);
  const emu = await startTelegramEmulator({ chatActions: true });
  const home = mkdtempSync(join(tmpdir(), "hearth-bench-tgmem-"));
  let daemon: ChildProcess | undefined;
  let floor: ChildProcess | undefined;
  try {
    writeFileSync(join(home, "config.json"), JSON.stringify({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } } }), { mode: 0o600 });
    // A first start fills the compile cache, as any start after the first has it; then a cold
    // process for the figures.
    await stopDaemon(await startDaemon(home, model.url, emu));
    daemon = await startDaemon(home, model.url, emu);
    await sleep(2000);
    const idle = rssMb(daemon.pid!);
    const dm = ownerDm(emu, emu.user({ userId: OWNER, firstName: "Ann" }));
    for (let i = 0; i < 20; i++) await dm(i);
    await sleep(SETTLE_MS);
    const after20 = rssMb(daemon.pid!);
    for (let i = 20; i < 200; i++) await dm(i);
    await sleep(SETTLE_MS);
    const after200 = rssMb(daemon.pid!);

    await stopDaemon(daemon);
    daemon = undefined;
    writeFileSync(join(home, "config.json"), JSON.stringify({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } }, dashboard: { enabled: true, port: 0 } }), { mode: 0o600 });
    await stopDaemon(await startDaemon(home, model.url, emu));
    daemon = await startDaemon(home, model.url, emu);
    await sleep(2000);
    const idleDashboard = rssMb(daemon.pid!);

    floor = spawn(process.execPath, ["-e", "require('node:http').createServer().listen(0, '127.0.0.1', () => process.stdout.write('up\\n'))"], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve) => floor!.stdout!.once("data", () => resolve()));
    await sleep(2000);
    const floorIdle = rssMb(floor.pid!);

    return [
      { name: "telegram on: daemon RSS idle (cold start)", value: round(idle, 1), unit: "MB", target: 110 },
      { name: "telegram on: daemon RSS after the first 20 answers", value: round(after20, 1), unit: "MB", target: 125 },
      { name: "telegram on: RSS growth over the first 20 answers", value: round(after20 - idle, 1), unit: "MB", target: 20 },
      { name: "telegram on: daemon RSS after 200 answers", value: round(after200, 1), unit: "MB", target: 125 },
      { name: "dashboard on, unused: daemon RSS idle (cold start)", value: round(idleDashboard, 1), unit: "MB", target: 115 },
      { name: "dashboard on, unused: idle RSS over dashboard off", value: round(idleDashboard - idle, 1), unit: "MB", target: 5 },
      { name: "floor: node -e with an idle HTTP server, RSS", value: round(floorIdle, 1), unit: "MB", target: 100 },
    ];
  } finally {
    if (daemon) await stopDaemon(daemon);
    floor?.kill("SIGKILL");
    await emu.stop();
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}

function startDaemon(home: string, modelUrl: string, emu: TelegramEmulator): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...DAEMON_ENV, HEARTH_HOME: home, HEARTH_LOG: "warn", ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: modelUrl, TELEGRAM_BOT_TOKEN: emu.token };
    const child = spawn(process.execPath, [...daemonNodeArgs(), bin, "start"], { env, stdio: ["ignore", "ignore", "inherit", "ipc"] });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`hearth start exited with ${code} before ready`)));
    child.on("message", (m) => {
      if (m !== "ready") return;
      child.removeAllListeners("exit");
      resolve(child);
    });
  });
}

function stopDaemon(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** One owner DM; resolves once the bot's final answer to it is at the emulator. */
function ownerDm(emu: TelegramEmulator, user: EmulatedUser) {
  return async (i: number): Promise<void> => {
    const before = emu.botMessages(user.chatId).length;
    await user.send(`Please remember item number ${i}.`);
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    while (emu.botMessages(user.chatId).length <= before || emu.botMessages(user.chatId).at(-1)!.text !== REPLY) {
      if (Date.now() > deadline) throw new Error(`no answer to DM ${i} within ${REPLY_TIMEOUT_MS} ms`);
      await sleep(5);
    }
  };
}
