// The versions of Hearth's state files. A whole-file store (sessions/index.json, pairing.json,
// cron/jobs.json, …) carries a top-level `"version"`; storage.ts's loadJsonFile compares it with
// the store's current version when it reads the file: an older file is migrated by small steps,
// a newer one is refused. The planning lives here, the file handling in storage.ts.
import { basename } from "node:path";

/**
 * A state file written by a newer Hearth: reading it could drop what this version does not know,
 * and a save would then destroy it. The file is left as it is; the CLI exits 2 with the message.
 */
export class NewerStateError extends Error {
  override name = "NewerStateError";
  readonly file: string;
  readonly version: number;
  constructor(file: string, version: number, current: number) {
    super(
      `${file} is state version ${version}, written by a newer Hearth; this one reads versions up to ${current}. ` +
        `Update Hearth (git pull && npm install), or restore the file this version wrote (${basename(file)}.v${current}.bak, if an upgrade left one).`,
    );
    this.file = file;
    this.version = version;
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
