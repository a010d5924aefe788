// The versions of Hearth's state files. A whole-file store (sessions/index.json, pairing.json,
// cron/jobs.json, …) carries a top-level `"version"`; storage.ts's loadJsonFile compares it with
// the store's current version when it reads the file: an older file is migrated by small steps,
// a newer one is refused. An append-only JSON-lines file (usage.jsonl, tasks.jsonl) is never
// rewritten for an upgrade: each record carries its own `"v"` and is migrated as it is read
// (storage.ts's readVersionedJsonLines). The planning lives here, the file handling in storage.ts.
import { basename } from "node:path";

/**
 * A state file written by a newer Hearth: reading it could drop what this version does not know,
 * and a save would then destroy it. The file is left as it is; the CLI exits 2 with the message.
 */
export class NewerStateError extends Error {
  override name = "NewerStateError";
  readonly file: string;
  readonly version: number;
  /** The 1-based line of a JSON-lines file's newer record; absent for a whole-file store. */
  readonly line: number | undefined;
  constructor(file: string, version: number, current: number, line?: number) {
    super(
      line === undefined
        ? `${file} is state version ${version}, written by a newer Hearth; this one reads versions up to ${current}. ` +
            `Update Hearth (git pull && npm install), or restore the file this version wrote (${basename(file)}.v${current}.bak, if an upgrade left one).`
        : // An append-only file keeps no .bak: its older records are migrated as they are read.
          `${file} line ${line} is record version ${version}, written by a newer Hearth; this one reads versions up to ${current}. ` +
            `Update Hearth (git pull && npm install); the file was left as it is.`,
    );
    this.file = file;
    this.version = version;
    this.line = line;
  }
}

/** One step of a state file's format, from version `from` to `from + 1`. Pure; it never throws for a value of version `from`. */
export interface StateStep {
  from: number;
  /** Verb + object, for the log: "addVersion". */
  name: string;
  apply(raw: Record<string, unknown>): Record<string, unknown>;
}

/**
 * A whole-file store's format versions. The file's top-level `"version"` (absent: 0) is compared
 * with `current`: newer throws NewerStateError; older runs `steps` in order. A version with no
 * chain of steps to `current` (or no whole number) is left to the store's schema and salvage.
 */
export interface StateVersions {
  current: number;
  steps: StateStep[];
}

/** What reading `raw` at `versions.current` takes: null when nothing (current, or no chain). Throws NewerStateError. */
export function planStateMigration(file: string, raw: unknown, versions: StateVersions): { from: number; steps: StateStep[]; value: Record<string, unknown> } | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const found = (raw as Record<string, unknown>).version ?? 0;
  if (typeof found !== "number" || !Number.isInteger(found) || found < 0) return null;
  if (found > versions.current) throw new NewerStateError(file, found, versions.current);
  if (found === versions.current) return null;
  const steps: StateStep[] = [];
  for (let v = found; v < versions.current; v++) {
    const step = versions.steps.find((s) => s.from === v);
    if (!step) return null;
    steps.push(step);
  }
  let value = raw as Record<string, unknown>;
  for (const step of steps) value = { ...step.apply(value), version: step.from + 1 };
  return { from: found, steps, value };
}

/**
 * An append-only JSON-lines file's record versions. Each record carries `"v"`; a record without
 * one is version 1 (every record written before versions), so a file from before needs no
 * rewrite. A reader brings each record to `current` by `steps` (from `from` to `from + 1`) as it
 * reads it; the file itself is never rewritten for an upgrade. A writer writes `"v": current`
 * once `current` is above 1 (stampRecord); at 1 records are written as they always were.
 */
export interface RecordVersions {
  current: number;
  steps: StateStep[];
}

export type RecordUpgrade = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * Brings one parsed record to `versions.current`, `"v"` removed (readers see the current shape,
 * with no version field). A value that is not an object is returned as it is (the record's check
 * names it). A `"v"` that is not a whole number from 1 on, or an older version with no chain of
 * steps, is a problem: the line is skipped like any record of the wrong shape. A newer version
 * throws NewerStateError naming `file` and `line`: skipping it would drop what this version does
 * not know, and a compaction of the file would destroy it.
 */
export function upgradeRecord(file: string, line: number, raw: unknown, versions: RecordVersions): RecordUpgrade {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: true, value: raw };
  const { v = 1, ...record } = raw as Record<string, unknown>;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) return { ok: false, problem: `an unknown record version (${JSON.stringify(v)})` };
  if (v > versions.current) throw new NewerStateError(file, v, versions.current, line);
  let value = record;
  for (let from = v; from < versions.current; from++) {
    const step = versions.steps.find((s) => s.from === from);
    if (!step) return { ok: false, problem: `record version ${v}, which no step migrates` };
    const { v: _, ...next } = step.apply(value);
    value = next;
  }
  return { ok: true, value };
}

/** `record` as a writer appends it: with `"v"` once the file's current version is above 1. */
export function stampRecord<T extends object>(record: T, versions: RecordVersions): T | (T & { v: number }) {
  return versions.current === 1 ? record : { v: versions.current, ...record };
}
