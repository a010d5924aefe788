// Untrusted content (web pages, PDFs from the web or from chats) is parsed here, never on the
// daemon's main thread: a page of deeply nested tags or a PDF bomb would otherwise hold every
// chat and take the daemon's memory. Each job runs in a worker thread with a heap limit and a
// wall-clock limit; a job past either ends with its worker terminated and a `too-complex`
// result. At most two workers exist, started on first use and ended after a minute idle, so an
// idle daemon carries none.
import { Worker } from "node:worker_threads";
import type { Job, JobResult } from "./jobs.ts";

/** The heap a parse may use (V8 old generation); the young generation adds up to 48 MB, as on the main thread. */
export const PARSE_HEAP_MB = 128;
/** How long a page's extraction may take; a PDF's text may take longer. */
export const HTML_TIMEOUT_MS = 10_000;
export const PDF_TIMEOUT_MS = 30_000;
/** Starting a worker and loading its libraries (before a job's own clock runs); generous for a busy machine. */
const START_TIMEOUT_MS = 120_000;

export interface RunOptions {
  timeoutMs: number;
  /** Aborting ends the job (and its worker); the result is then `failed`. */
  signal?: AbortSignal;
}

interface PoolOptions {
  maxWorkers: number;
  idleMs: number;
  heapMb: number;
}

export class ParsePool {
  readonly #opts: PoolOptions;
  readonly #idle: Array<{ worker: Worker; timer: NodeJS.Timeout }> = [];
  readonly #waiting: Array<() => void> = [];
  readonly #busy = new Set<Worker>();
  #live = 0;
  #closed = false;

  constructor(opts: Partial<PoolOptions> = {}) {
    this.#opts = { maxWorkers: 2, idleMs: 60_000, heapMb: PARSE_HEAP_MB, ...opts };
  }

  /** Workers running now (busy or idle). */
  get size(): number {
    return this.#live;
  }

  /** Runs `job` in a worker. Never rejects: a limit hit is `too-complex`, anything else `failed`. */
  async run(job: Job, opts: RunOptions): Promise<JobResult> {
    if (opts.signal?.aborted) return stopped;
    const worker = await this.#acquire();
    if (opts.signal?.aborted) {
      this.#release(worker);
      return stopped;
    }
    this.#busy.add(worker);
    const outcome = await this.#runOn(worker, job, opts);
    this.#busy.delete(worker);
    if (outcome.keep && !this.#closed) this.#release(worker);
    else this.#discard(worker);
    return outcome.result;
  }

  /** Ends every worker; a job still running ends as `failed`. The pool can be used again after. */
  async close(): Promise<void> {
    this.#closed = true;
    const busy = [...this.#busy];
    const idle = this.#idle.splice(0);
    for (const { timer } of idle) clearTimeout(timer);
    this.#live -= idle.length;
    await Promise.all([...idle.map(({ worker }) => worker.terminate()), ...busy.map((w) => w.terminate())]);
    this.#closed = false;
  }

  async #acquire(): Promise<Worker> {
    for (;;) {
      const idle = this.#idle.pop();
      if (idle) {
        clearTimeout(idle.timer);
        idle.worker.ref();
        return idle.worker;
      }
      if (this.#live < this.#opts.maxWorkers) {
        this.#live++;
        const h = this.#opts.heapMb;
        const worker = new Worker(new URL("./worker.ts", import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: h, maxYoungGenerationSizeMb: 48, stackSizeMb: 4 } });
        // A worker past its time limit may still run out of memory while it is being terminated,
        // after its job's listeners are gone: an 'error' with no listener would end the daemon.
        worker.on("error", () => {});
        return worker;
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #release(worker: Worker): void {
    worker.unref();
    const timer = setTimeout(() => {
      const i = this.#idle.findIndex((w) => w.worker === worker);
      if (i >= 0) this.#idle.splice(i, 1);
      this.#live--;
      void worker.terminate();
    }, this.#opts.idleMs);
    timer.unref();
    this.#idle.push({ worker, timer });
    this.#waiting.shift()?.();
  }

  #discard(worker: Worker): void {
    this.#live--;
    void worker.terminate();
    this.#waiting.shift()?.();
  }

  #runOn(worker: Worker, job: Job, opts: RunOptions): Promise<{ result: JobResult; keep: boolean }> {
    return new Promise((resolve) => {
      const finish = (result: JobResult, keep: boolean) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
        resolve({ result, keep });
      };
      const onMessage = (msg: JobResult | "started") => {
        if (msg !== "started") return finish(msg, true);
        // The job's own clock starts now: loading the libraries is not the input's doing.
        clearTimeout(timer);
        timer = setTimeout(() => finish({ type: "too-complex", reason: `extracting it took longer than ${Math.round(opts.timeoutMs / 1000)} s` }, false), opts.timeoutMs);
      };
      const onError = (err: Error & { code?: string }) =>
        finish(err.code === "ERR_WORKER_OUT_OF_MEMORY" ? { type: "too-complex", reason: `extracting it needed more than ${this.#opts.heapMb} MB of memory` } : { type: "failed", message: err.message }, false);
      const onExit = (code: number) => finish({ type: "failed", message: `the parser stopped (exit code ${code})` }, false);
      const onAbort = () => finish(stopped, false);
      let timer = setTimeout(() => finish({ type: "failed", message: "the parser did not start" }, false), START_TIMEOUT_MS);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
      worker.postMessage(job);
    });
  }
}

const stopped: JobResult = { type: "failed", message: "The extraction was stopped." };

let shared: ParsePool | undefined;

/** The daemon's one pool, made on first use. */
export function parsePool(): ParsePool {
  shared ??= new ParsePool();
  return shared;
}

/** Ends the daemon's pool, if it was ever made (at shutdown: a parse must not keep the process up). */
export async function stopParsing(): Promise<void> {
  await shared?.close();
}
