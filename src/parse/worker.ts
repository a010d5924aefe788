// The parse worker's entry (a worker_threads thread started by pool.ts): one job at a time,
// answered by "started" once its libraries are loaded, then by its result. Its heap is bounded
// by the pool's resourceLimits and its time by the pool's clock: it needs no limits of its own.
import { parentPort } from "node:worker_threads";
import { loadParsers, runJob, type Job, type JobResult } from "./jobs.ts";

const port = parentPort!;
port.on("message", (job: Job) => {
  void loadParsers(job)
    .then(() => port.postMessage("started"))
    .then(() => runJob(job))
    .then(
      (result) => port.postMessage(result),
      (err: unknown) => port.postMessage({ type: "failed", message: err instanceof Error ? err.message : String(err) } satisfies JobResult),
    );
});
