// <home>/cron/jobs.json: read and validated as a whole, written atomically (temp file + rename),
// and watched for hand edits. An edit that does not validate is reported and changes nothing;
// the daemon's own writes are recognised by their content and never read back as edits.
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { z } from "zod";
import type { Logger } from "../../log.ts";
import { writeFileAtomic } from "../../storage.ts";
import { jobsFileSchema, type Job, type JobRules } from "./job.ts";

export type LoadResult = { ok: true; jobs: Job[] } | { ok: false; problem: string };

/** jobs.json cannot be changed now: its content on disk is invalid (a hand edit in progress). */
export class JobsFileError extends Error {
  override name = "JobsFileError";
}

const SETTLE = { stabilityThreshold: 150, pollInterval: 50 };

export class JobStore {
  readonly path: string;
  readonly #schema: ReturnType<typeof jobsFileSchema>;
  readonly #log: Logger;
  /** The content last read from or written to disk ("" for no file). */
  #known: string | null = null;
  /** Why the content on disk is not valid, while it is not. */
  #problem: string | null = null;
  #watcher: FSWatcher | null = null;

  constructor(file: string, rules: JobRules, log: Logger) {
    this.path = file;
    this.#schema = jobsFileSchema(rules);
    this.#log = log;
  }

  /** Reads and validates the file (a missing one holds no jobs) and remembers its content. */
  read(): LoadResult {
    const text = this.#readText();
    this.#known = text;
    const result = this.#parse(text);
    this.#problem = result.ok ? null : result.problem;
    return result;
  }

  /** True when the file holds something this store has not read or written. */
  changedOnDisk(): boolean {
    return this.#readText() !== this.#known;
  }

  /** The problem with the file on disk as last read; null when it was valid. */
  problem(): string | null {
    return this.#problem;
  }

  /** Replaces the file with `jobs`, atomically. Throws if they do not validate or the write fails. */
  save(jobs: Job[]): void {
    const file = this.#schema.parse({ version: 1, jobs });
    const text = `${JSON.stringify(file, null, 2)}\n`;
    writeFileAtomic(this.path, text);
    this.#known = text;
    this.#problem = null;
  }

  /**
   * Calls `onEdit` once per settled change of the file that this store did not write (an
   * editor's save through a temp file and a rename is one change). `onEdit` must not throw.
   */
  async watch(onEdit: (r: LoadResult) => void): Promise<void> {
    const dir = path.dirname(this.path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const w = watch(dir, {
      ignoreInitial: true,
      depth: 0,
      awaitWriteFinish: SETTLE,
      ignored: (p: string) => p !== dir && p !== this.path,
    });
    const changed = () => {
      if (!this.changedOnDisk()) return;
      const r = this.read();
      if (r.ok) this.#log.info("cron.jobs_edited", { jobs: r.jobs.length });
      else this.#log.warn("cron.jobs_invalid", { file: this.path, problem: r.problem, action: "kept the previous jobs; fix the file and save it again" });
      onEdit(r);
    };
    w.on("add", changed);
    w.on("change", changed);
    w.on("unlink", changed);
    w.on("error", (err) => this.#log.warn("cron.watch_error", { error: err }));
    await new Promise<void>((resolve) => w.once("ready", () => resolve()));
    this.#watcher = w;
  }

  async close(): Promise<void> {
    await this.#watcher?.close();
    this.#watcher = null;
  }

  #readText(): string {
    try {
      return readFileSync(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return "";
      return `\u0000unreadable: ${(err as Error).message}`;
    }
  }

  #parse(text: string): LoadResult {
    if (text.startsWith("\u0000unreadable: ")) return { ok: false, problem: `cannot read ${this.path}: ${text.slice(13)}` };
    if (text.trim() === "") return { ok: true, jobs: [] };
    let raw: unknown;
    try {
      raw = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch (err) {
      return { ok: false, problem: `not valid JSON: ${(err as Error).message}` };
    }
    const parsed = this.#schema.safeParse(raw);
    if (!parsed.success) return { ok: false, problem: oneLine(z.prettifyError(parsed.error)) };
    return { ok: true, jobs: parsed.data.jobs };
  }
}

/** zod's pretty error on one log line: "✖ message → at jobs[0].schedule; ✖ …". */
function oneLine(pretty: string): string {
  return pretty
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ")
    .replace(/ ✖/g, "; ✖");
}
