// Backup archives of the home: create (a gzipped tar with a manifest), verify (every hash) and
// restore (verified first, never over a non-empty home without `force`). tar loads on first use.
// An archive is outside content: its entries are checked against the manifest, links and
// special files are never extracted, and a path that leaves `home/` is refused.
import { createHash } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ARCHIVE_LIMITS, ArchiveLimitError, MAX_META_ENTRY_BYTES, readArchive, type ArchiveLimits } from "./archive-reader.ts";
import { checkManifest, HOME_PREFIX, MANIFEST_NAME, type Manifest, type ManifestFile } from "./manifest.ts";
import { sha256, snapshotHome, type LeftOut } from "./snapshot.ts";

export interface CreateOptions {
  home: string;
  out: string;
  includeSecrets: boolean;
  /** Folders of backups inside the home, left out. */
  backupDirs: string[];
  /** Hearth's version, recorded in the manifest. */
  hearth: string;
  now?: Date;
}

export interface Created {
  file: string;
  files: number;
  bytes: number;
  left: LeftOut[];
  /** config.json keys whose values were blanked. */
  redacted: string[];
}

/** Writes the archive next to `out` and renames it into place (mode 600: it holds private notes). */
export async function createBackup(opts: CreateOptions): Promise<Created> {
  const out = path.resolve(opts.out);
  const staging = `${out}.staging-${process.pid}`;
  const temp = `${out}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  let files: Manifest["files"] = [];
  let left: LeftOut[] = [];
  try {
    mkdirSync(path.join(staging, "home"), { recursive: true, mode: 0o700 });
    ({ files, left } = snapshotHome(opts.home, { includeSecrets: opts.includeSecrets, backupDirs: opts.backupDirs, scratch: staging }, (f) => {
      const dest = path.join(staging, "home", ...f.path.split("/"));
      mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
      writeFileSync(dest, f.bytes, { mode: 0o600 });
    }));
    const manifest: Manifest = { format: "hearth-backup", version: 1, createdAt: (opts.now ?? new Date()).toISOString(), hearth: opts.hearth, files, left };
    writeFileSync(path.join(staging, MANIFEST_NAME), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
    const tar = await import("tar");
    // Only the files: folders come back from their paths, and an empty one is not worth keeping.
    await tar.c({ gzip: true, file: temp, cwd: staging, portable: true }, [MANIFEST_NAME, ...files.map((f) => `home/${f.path}`)]);
    const fd = openSync(temp, "r");
    fsyncSync(fd);
    closeSync(fd);
    chmodSync(temp, 0o600);
    renameSync(temp, out);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(temp, { force: true });
  }
  return {
    file: out,
    files: files.length,
    bytes: lstatSync(out).size,
    left,
    redacted: files.flatMap((f) => f.redacted ?? []),
  };
}

/**
 * A manifest larger than this is not one Hearth wrote: it is kept whole in memory to be parsed
 * (about 100,000 files; a personal home holds far fewer).
 */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
/** Files (and lists) a manifest may name: 250,000 files' entries parse to about 80 MB. */
const MAX_MANIFEST_OBJECTS = 300_000;
/** Problems listed one by one before the rest are counted: a hostile archive may have millions. */
const MAX_LISTED_PROBLEMS = 50;

export type Verified = { ok: true; manifest: Manifest } | { ok: false; problems: string[]; manifest: Manifest | null };

/**
 * Reads the whole archive in bounded memory (archive-reader.ts: caps on bytes per entry, in
 * total and on the expansion, as they arrive) and checks every file against the manifest, its
 * first entry; each problem names its file.
 */
export async function verifyBackup(file: string, limits: ArchiveLimits = ARCHIVE_LIMITS): Promise<Verified> {
  const problems: string[] = [];
  let extra = 0;
  const problem = (p: string) => (problems.length < MAX_LISTED_PROBLEMS ? problems.push(p) : extra++);
  let manifestText: string | null = null;
  let manifest: Manifest | null = null;
  let entries = 0;
  const seen = new Set<string>();
  let current = "";
  const tar = await import("tar");
  const listed = () => {
    if (manifest === null && manifestText !== null) {
      manifest = parseManifest(manifestText, problems);
      manifestText = "";
    }
    return manifest ? new Map(manifest.files.map((f) => [HOME_PREFIX + f.path, f])) : null;
  };
  let expected: Map<string, ManifestFile> | null = null;
  const parser = new tar.Parser({
    strict: true,
    maxMetaEntrySize: MAX_META_ENTRY_BYTES,
    onReadEntry: (entry) => {
      current = entry.path;
      const first = entries++ === 0;
      if (entry.path === MANIFEST_NAME && first) {
        if (entry.size > MAX_MANIFEST_BYTES) {
          problem(`${MANIFEST_NAME}: ${entry.size} bytes, larger than a Hearth backup's manifest`);
          manifestText = "";
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on("data", (c: Buffer) => chunks.push(c));
        entry.on("end", () => (manifestText = Buffer.concat(chunks).toString("utf8")));
        return;
      }
      expected ??= listed();
      if (entry.type === "Directory") return entry.resume();
      if (entry.type !== "File" && entry.type !== "OldFile") {
        problem(`${entry.path}: a ${entry.type} entry; a Hearth backup holds only files`);
        return entry.resume();
      }
      const want = expected?.get(entry.path);
      if (!want || seen.has(entry.path)) {
        if (expected) problem(`${entry.path}: in the archive but not in the manifest`);
        return entry.resume();
      }
      // Hashed as it streams, never kept.
      const hash = createHash("sha256");
      let size = 0;
      entry.on("data", (c: Buffer) => {
        size += c.length;
        hash.update(c);
      });
      entry.on("end", () => {
        seen.add(entry.path);
        const got = hash.digest("hex");
        if (size !== want.size || got !== want.sha256) problem(`${want.path}: its bytes do not match the manifest (sha256 ${got.slice(0, 12)}…, expected ${want.sha256.slice(0, 12)}…)`);
      });
    },
  });
  try {
    await readArchive(file, parser, "end", limits);
  } catch (err) {
    if (err instanceof ArchiveLimitError) {
      problems.unshift(`refused: ${err.message}`);
      return { ok: false, problems, manifest: null };
    }
    const where = current ? ` at ${current.startsWith(HOME_PREFIX) ? current.slice(HOME_PREFIX.length) : current}` : "";
    // The break comes first: it explains the problems that follow from it.
    problems.unshift(`the archive is damaged${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
  expected ??= listed();
  if (manifestText === null && manifest === null) problems.push(`${MANIFEST_NAME}: missing; this is not a Hearth backup (or not a whole one)`);
  // (Assigned in the entry callback, which TypeScript does not follow.)
  const found = manifest as Manifest | null;
  if (found) for (const f of found.files) if (!seen.has(HOME_PREFIX + f.path)) problem(`${f.path}: missing from the archive`);
  if (extra > 0) problems.push(`… and ${extra} more problems`);
  return problems.length === 0 && found ? { ok: true, manifest: found } : { ok: false, problems, manifest: found };
}

function parseManifest(text: string | null, problems: string[]): Manifest | null {
  if (text === null) {
    problems.push(`${MANIFEST_NAME}: missing; this is not a Hearth backup (or not a whole one)`);
    return null;
  }
  if (!fewEnoughValues(text)) {
    problems.push(`${MANIFEST_NAME}: more entries than a Hearth backup's manifest holds (at most ${MAX_MANIFEST_OBJECTS} objects)`);
    return null;
  }
  try {
    const checked = checkManifest(JSON.parse(text));
    if (checked.ok) return checked.manifest;
    problems.push(`${MANIFEST_NAME}: not a Hearth backup manifest (${checked.message})`);
  } catch {
    problems.push(`${MANIFEST_NAME}: not valid JSON`);
  }
  return null;
}

/**
 * Whether parsing `text` makes a bounded number of values. JSON.parse of 16 MiB of `{},{},…`
 * makes five million objects (~700 MB): the objects and the values between commas are counted
 * first, each file of a real manifest being one object of four values.
 */
function fewEnoughValues(text: string): boolean {
  let objects = 0;
  let values = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) objects++;
    else if (c === 0x2c) values++;
  }
  return objects <= MAX_MANIFEST_OBJECTS && values <= MAX_MANIFEST_OBJECTS * 5;
}

export type Restored =
  | { type: "restored"; files: number; replaced: string | null; manifest: Manifest }
  | { type: "not-empty" }
  | { type: "invalid"; problems: string[] };

/**
 * Restores into `home`: the archive is verified first; a home that holds anything is left alone
 * unless `force`, and then moved aside to `<home>.before-restore-<time>` rather than deleted.
 * Files are extracted into a sibling folder, checked once more, and renamed into place, so a
 * failure midway leaves the home as it was. Mode 700 for folders, 600 for files.
 */
export async function restoreBackup(file: string, home: string, opts: { force: boolean; now?: Date }, limits: ArchiveLimits = ARCHIVE_LIMITS): Promise<Restored> {
  const checked = await verifyBackup(file, limits);
  if (!checked.ok) return { type: "invalid", problems: checked.problems };
  const target = path.resolve(home);
  const existing = lstatSync(target, { throwIfNoEntry: false });
  const nonEmpty = existing !== undefined && (!existing.isDirectory() || readdirSync(target).length > 0);
  if (nonEmpty && !opts.force) return { type: "not-empty" };

  const { manifest } = checked;
  const wanted = new Map(manifest.files.map((f) => [HOME_PREFIX + f.path, f.size]));
  const staging = path.join(path.dirname(target), `.${path.basename(target)}.restoring-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    const tar = await import("tar");
    const unpack = new tar.Unpack({
      cwd: staging,
      strict: true,
      strip: 1,
      maxMetaEntrySize: MAX_META_ENTRY_BYTES,
      // Only the files the verified manifest names, at the size it names; never a link, a device or a path outside.
      filter: (p, entry) => "type" in entry && (entry.type === "File" || entry.type === "OldFile") && wanted.get(p) === entry.size,
    });
    await readArchive(file, unpack, "close", limits);
    for (const f of manifest.files) {
      const abs = path.join(staging, ...f.path.split("/"));
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (!st?.isFile() || sha256(readFileSync(abs)) !== f.sha256) throw new Error(`${f.path} did not come out of the archive as written`);
    }
    tightenModes(staging);
    let replaced: string | null = null;
    if (nonEmpty) {
      replaced = `${target}.before-restore-${(opts.now ?? new Date()).toISOString().replace(/[:.]/gu, "-")}`;
      renameSync(target, replaced);
    } else if (existing) rmdirSync(target);
    renameSync(staging, target);
    return { type: "restored", files: manifest.files.length, replaced, manifest };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function tightenModes(dir: string): void {
  chmodSync(dir, 0o700);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) tightenModes(abs);
    else chmodSync(abs, 0o600);
  }
}
