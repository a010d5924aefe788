// Keeps the home's log files bounded. Whoever writes them — pm2, or `hearth start` in the
// background — opens <home>/logs/*.log for appending, so the daemon rotates them in place: it
// copies a file that grew past the limit to `<name>.1` (older copies moving up to `.N`, the last
// dropped) and truncates the original, after which every writer's appends land at its new end.
// A line written between the copy and the truncation is lost (the price of rotating a file
// another process holds open); nothing else is. pm2-logrotate, where installed, may rotate first.
import { copyFileSync, existsSync, readdirSync, renameSync, rmSync, statSync, truncateSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../../process/log.ts";

export interface LogRotationOptions {
  /** The folder of the log files (`<home>/logs`). */
  dir: string;
  /** A file over this size is rotated. */
  maxBytes: number;
  /** Rotated copies kept per file. */
  keep: number;
  log: Logger;
}

export const LOG_MAX_BYTES = 10 * 1024 * 1024;
export const LOG_KEEP = 3;
/** How often the sizes are looked at. */
const CHECK_MS = 10 * 60_000;

/** Rotates the folder's `*.log` files that are over the limit; returns the names rotated. */
export function rotateLogs(o: Omit<LogRotationOptions, "log"> & { log?: Logger }): string[] {
  if (!existsSync(o.dir)) return [];
  const rotated: string[] = [];
  for (const name of readdirSync(o.dir).filter((n) => n.endsWith(".log"))) {
    const file = path.join(o.dir, name);
    try {
      if (statSync(file).size <= o.maxBytes) continue;
      rmSync(`${file}.${o.keep}`, { force: true });
      for (let i = o.keep - 1; i >= 1; i--) if (existsSync(`${file}.${i}`)) renameSync(`${file}.${i}`, `${file}.${i + 1}`);
      copyFileSync(file, `${file}.1`);
      truncateSync(file, 0);
      rotated.push(name);
    } catch (err) {
      o.log?.warn("logs.rotate_failed", { file, error: err });
    }
  }
  return rotated;
}

/** Rotates now and every ten minutes until the returned function is called. */
export function startLogRotation(o: LogRotationOptions): () => void {
  const run = () => {
    const rotated = rotateLogs(o);
    if (rotated.length > 0) o.log.info("logs.rotated", { files: rotated, keep: o.keep });
  };
  run();
  const timer = setInterval(run, CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
