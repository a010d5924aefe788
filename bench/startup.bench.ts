// Start-up (issue 9): `hearth start` with no chat channels, to the moment it signals ready (the
// message pm2 waits for); its idle RSS; RSS after answering; production dependencies on disk.
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { percentile, round, type Figure } from "./harness.ts";
import { DAEMON_ENV } from "../src/process/daemon-env.ts";
import { daemonNodeArgs } from "./support/daemon-args.ts";
import { startZeroModel } from "./support/zero-model.ts";

const execFileAsync = promisify(execFile);
const root = fileURLToPath(new URL("../", import.meta.url));
const bin = join(root, "bin", "hearth.js");

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

const env = (home: string, modelUrl: string) => ({ ...process.env, ...DAEMON_ENV, HEARTH_HOME: home, ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: modelUrl, HEARTH_LOG: "warn" });

/** Starts the daemon as `npm start` does and resolves with the ms until it sent "ready", and the child. */
function startDaemon(home: string, modelUrl: string): Promise<{ ms: number; pid: number; stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...daemonNodeArgs(), bin, "start"], { env: env(home, modelUrl), stdio: ["ignore", "ignore", "inherit", "ipc"] });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`hearth start exited with ${code} before ready`)));
    child.on("message", (m) => {
      if (m !== "ready") return;
      child.removeAllListeners("exit");
      resolve({
        ms: performance.now() - t0,
        pid: child.pid!,
        stop: () => new Promise<void>((r) => (child.once("exit", () => r()), child.kill("SIGTERM"))),
      });
    });
  });
}

/** Async on purpose: the model server runs in this process and must keep answering. */
async function chat(home: string, modelUrl: string, text: string): Promise<void> {
  await execFileAsync(process.execPath, [bin, "chat", "-m", text], { env: env(home, modelUrl) });
}

// The target grew with the capabilities whose libraries the project uses:
// @modelcontextprotocol/sdk with its HTTP stack (~15 MB), the web-fetch libraries (readability,
// linkedom, turndown, unpdf: ~15 MB), sharp with its libvips build (~20 MB, pictures) and
// web-tree-sitter (~5 MB, the approvals' bash reader; its grammar is kept in vendor/). The core
// (Telegram, Discord, Anthropic, zod) is the ~70 MB it was; none of the others loads until used.
// OpenAI-compatible providers need no package (providers/openai/chat-api.ts).
const DEPENDENCIES_TARGET_MB = 175;

function productionDependenciesMb(): Figure {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-deps-"));
  try {
    copyFileSync(join(root, "package.json"), join(dir, "package.json"));
    copyFileSync(join(root, "package-lock.json"), join(dir, "package-lock.json"));
    execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: "ignore" });
    const kb = Number(execFileSync("du", ["-sk", join(dir, "node_modules")]).toString().split("\t")[0]);
    return { name: "production dependencies on disk (npm ci --omit=dev)", value: round(kb / 1024, 1), unit: "MB", target: DEPENDENCIES_TARGET_MB };
  } catch (err) {
    process.stderr.write(`production dependency size not measured: ${(err as Error).message.split("\n")[0]}\n`);
    return { name: "production dependencies on disk (npm ci --omit=dev): not measured, npm ci failed", value: Number.NaN, unit: "MB", target: DEPENDENCIES_TARGET_MB };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startupBench(): Promise<Figure[]> {
  const model = await startZeroModel("Hello from the benchmark.");
  const home = mkdtempSync(join(tmpdir(), "hearth-bench-start-"));
  try {
    // One start to fill the compile cache, as any start after the first has it.
    await (await startDaemon(home, model.url)).stop();
    const times: number[] = [];
    let idle = 0;
    let afterAnswers = 0;
    for (let i = 0; i < 5; i++) {
      const d = await startDaemon(home, model.url);
      times.push(d.ms);
      if (i === 4) {
        await new Promise((r) => setTimeout(r, 2000));
        idle = rssMb(d.pid);
        for (let n = 0; n < 20; n++) await chat(home, model.url, `message ${n}`);
        await new Promise((r) => setTimeout(r, 1000));
        afterAnswers = rssMb(d.pid);
      }
      await d.stop();
    }
    times.sort((a, b) => a - b);
    return [
      { name: "hearth start to ready, no channels (p50 of 5)", value: round(percentile(times, 50), 0), unit: "ms", target: 500 },
      { name: "idle RSS after start", value: round(idle, 1), unit: "MB", target: 100 },
      { name: "RSS after answering 20 messages", value: round(afterAnswers, 1), unit: "MB", target: 150 },
      productionDependenciesMb(),
    ];
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}
