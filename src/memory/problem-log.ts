// The one log of workspace file problems a reader keeps, so that a damaged file read at every
// run is reported once and not at every read.
import type { Logger } from "../process/log.ts";

/**
 * Logs each distinct file problem once: the same path, reason and modification time is not
 * logged again, however often the file is read. A changed file (new mtime) is news again.
 */
export class ProblemLog {
  readonly #log: Logger;
  readonly #seen = new Set<string>();

  constructor(log: Logger) {
    this.#log = log;
  }

  warnOnce(absPath: string, reason: string, mtimeMs: number | undefined): void {
    const key = `${absPath}\0${reason}\0${mtimeMs ?? ""}`;
    if (this.#seen.has(key)) return;
    // A file whose mtime keeps changing must not grow this set without bound.
    if (this.#seen.size >= 1000) this.#seen.clear();
    this.#seen.add(key);
    this.#log.warn("memory.file_problem", { path: absPath, reason });
  }
}
