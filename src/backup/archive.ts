// Backup archives of the home: create (a gzipped tar with a manifest), verify (every hash) and
// restore (verified first, never over a non-empty home without `force`). tar loads on first use.
// An archive is outside content: its entries are checked against the manifest, links and
// special files are never extracted, and a path that leaves `home/` is refused.
import { createHash } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HOME_PREFIX, MANIFEST_NAME, manifestSchema, type Manifest } from "./manifest.ts";
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

/** A manifest larger than this is not one Hearth wrote (a million files take about 150 MB). */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

export type Verified = { ok: true; manifest: Manifest } | { ok: false; problems: string[]; manifest: Manifest | null };

/** Reads the whole archive and checks every file against the manifest; each problem names its file. */
export async function verifyBackup(file: string): Promise<Verified> {
  const seen = new Map<string, { size: number; sha256: string }>();
  const problems: string[] = [];
  let manifestText: string | null = null;
  let current = "";
  const tar = await import("tar");
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (entry) => {
        current = entry.path;
        // Hashed as it streams; only the manifest is kept whole.
        const hash = createHash("sha256");
        const manifestChunks: Buffer[] = [];
        let size = 0;
        entry.on("data", (c: Buffer) => {
          size += c.length;
          hash.update(c);
          if (entry.path === MANIFEST_NAME && size <= MAX_MANIFEST_BYTES) manifestChunks.push(c);
        });
        entry.on("end", () => {
          if (entry.path === MANIFEST_NAME) manifestText = size <= MAX_MANIFEST_BYTES ? Buffer.concat(manifestChunks).toString("utf8") : "";
          else if (entry.type === "File" || entry.type === "OldFile") seen.set(entry.path, { size, sha256: hash.digest("hex") });
          else if (entry.type !== "Directory") problems.push(`${entry.path}: a ${entry.type} entry; a Hearth backup holds only files`);
        });
      },
    });
  } catch (err) {
    const where = current ? ` at ${current.startsWith(HOME_PREFIX) ? current.slice(HOME_PREFIX.length) : current}` : "";
    problems.push(`the archive is damaged${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const manifest = parseManifest(manifestText, problems);
  if (manifest) {
    for (const f of manifest.files) {
      const got = seen.get(HOME_PREFIX + f.path);
      seen.delete(HOME_PREFIX + f.path);
      if (!got) problems.push(`${f.path}: missing from the archive`);
      else if (got.size !== f.size || got.sha256 !== f.sha256) problems.push(`${f.path}: its bytes do not match the manifest (sha256 ${got.sha256.slice(0, 12)}…, expected ${f.sha256.slice(0, 12)}…)`);
    }
    for (const extra of seen.keys()) problems.push(`${extra}: in the archive but not in the manifest`);
  }
  return problems.length === 0 && manifest ? { ok: true, manifest } : { ok: false, problems, manifest };
}

function parseManifest(text: string | null, problems: string[]): Manifest | null {
  if (text === null) {
    problems.push(`${MANIFEST_NAME}: missing; this is not a Hearth backup (or not a whole one)`);
    return null;
  }
  try {
    const parsed = manifestSchema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    problems.push(`${MANIFEST_NAME}: not a Hearth backup manifest (${parsed.error.issues[0]?.message ?? "invalid"})`);
  } catch {
    problems.push(`${MANIFEST_NAME}: not valid JSON`);
  }
  return null;
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
export async function restoreBackup(file: string, home: string, opts: { force: boolean; now?: Date }): Promise<Restored> {
  const checked = await verifyBackup(file);
  if (!checked.ok) return { type: "invalid", problems: checked.problems };
  const target = path.resolve(home);
  const existing = lstatSync(target, { throwIfNoEntry: false });
  const nonEmpty = existing !== undefined && (!existing.isDirectory() || readdirSync(target).length > 0);
  if (nonEmpty && !opts.force) return { type: "not-empty" };

  const { manifest } = checked;
  const wanted = new Set(manifest.files.map((f) => HOME_PREFIX + f.path));
  const staging = path.join(path.dirname(target), `.${path.basename(target)}.restoring-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    const tar = await import("tar");
    await tar.x({
      file,
      cwd: staging,
      strict: true,
      strip: 1,
      // Only the files the verified manifest names; never a link, a device or a path outside.
      filter: (p, entry) => "type" in entry && (entry.type === "File" || entry.type === "OldFile") && wanted.has(p),
    });
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
