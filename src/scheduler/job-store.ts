// <home>/cron/jobs.json: read and validated as a whole, written atomically (temp file + rename),
// and watched for hand edits. An edit that does not validate is reported and changes nothing;
// the daemon's own writes are recognised by their content and never read back as edits.
// At start-up (`load`) a damaged file is set aside as `jobs.json.damaged-<time>` by the
// validating loader, keeping every job that still validates, so it never blocks the scheduler
// and is never overwritten.
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { loadJsonFile, oneLine, writeFileAtomic, type Salvaged } from "../state/storage.ts";
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

  /**
   * Start-up: reads the file through the validating loader. Jobs that do not validate are
   * dropped and named in the log, and the file as it was is kept as `jobs.json.damaged-<time>`;
   * a file that is not JSON at all is moved there. Either way the result is usable: the jobs
   * that could be kept (written back at once, so the file on disk is valid again).
   */
  load(now: number = Date.now()): Job[] {
    const loaded = loadJsonFile(this.path, { schema: this.#schema, log: this.#log, versions: { current: 1, steps: [] }, salvage: (raw) => this.#salvage(raw), now });
    if (loaded.status === "ok" && loaded.damagedCopy) this.save(loaded.value.jobs);
    const r = this.read();
    return r.ok ? r.jobs : [];
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

  /** Keeps each job that validates together with those kept before it (ids stay unique). */
  #salvage(raw: unknown): Salvaged<z.output<ReturnType<typeof jobsFileSchema>>> | null {
    if (typeof raw !== "object" || raw === null || !Array.isArray((raw as { jobs?: unknown }).jobs)) return null;
    const kept: unknown[] = [];
    const dropped: string[] = [];
    for (const [i, job] of ((raw as { jobs: unknown[] }).jobs).entries()) {
      const r = this.#schema.safeParse({ version: 1, jobs: [...kept, job] });
      if (r.success) kept.push(job);
      else dropped.push(`jobs[${i}]${describeJob(job)}: ${oneLine(z.prettifyError(r.error))}`);
    }
    return { value: this.#schema.parse({ version: 1, jobs: kept }), dropped };
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

/** ` ("morning news", id ab12)` when the job has a name or id worth naming. */
function describeJob(job: unknown): string {
  const j = (typeof job === "object" && job !== null ? job : {}) as { name?: unknown; id?: unknown };
  const parts = [typeof j.name === "string" ? JSON.stringify(j.name) : "", typeof j.id === "string" ? `id ${j.id}` : ""].filter(Boolean);
  return parts.length ? ` (${parts.join(", ")})` : "";
}
