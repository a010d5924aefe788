// `hearth memory log [FILE]`, `memory diff [REV]` and `memory restore FILE --at REV`: the memory
// history (memory/history/) read straight from `<home>/history.git`; the daemon need not run.
// A restore writes the file where the daemon's watcher sees it as the owner's edit; with no
// daemon running it is recorded at once.
import path from "node:path";
import { loadConfig } from "../config/config.ts";
import { homePaths } from "../config/home.ts";
import { liveHolder } from "../gateway/upkeep/lock.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { commitSubject, fileChanges } from "../memory/history/file-log.ts";
import { GitStore } from "../memory/history/git-store.ts";
import { unifiedDiff } from "../memory/history/line-diff.ts";
import { isTracked, TrackedFiles } from "../memory/history/tracked.ts";
import { parse, UsageError } from "./args.ts";

interface MemoryIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runMemory(home: string, args: string[], io: MemoryIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "log" && sub !== "diff" && sub !== "restore") {
    throw new UsageError(sub === undefined ? "memory needs a subcommand: log, diff or restore." : `Unknown memory subcommand "${sub}" (log, diff or restore).`);
  }
  const { values, positionals } = parse(rest, sub === "restore" ? { at: { type: "string" } } : {}, true);
  if (positionals.length > 1) throw new UsageError(`memory ${sub} takes at most one ${sub === "diff" ? "revision" : "file"}.`);
  if (sub === "restore" && (positionals.length !== 1 || typeof values.at !== "string")) throw new UsageError("memory restore takes a FILE and --at REV.");
  const file = sub === "diff" ? undefined : positionals[0] === undefined ? undefined : workspacePath(positionals[0]);

  const config = loadConfig({ home });
  const store = await GitStore.open(homePaths(home).history, { create: false });
  if (!store || !store.head()) {
    io.stderr.write(`hearth: no memory history yet: it starts when Hearth first runs on this home.\n`);
    return 1;
  }
  const when = timeFormat(config.timezone);
  switch (sub) {
    case "log":
      return log(store, file, when, io);
    case "diff":
      return diff(store, new TrackedFiles(config.workspace), positionals[0], io);
    case "restore":
      return restore(store, new TrackedFiles(config.workspace), file!, values.at as string, when, home, io);
  }
}

/** A workspace-relative path with forward slashes; a path that leaves the workspace or is not tracked is a usage error. */
function workspacePath(arg: string): string {
  const rel = path.posix.normalize(arg.replaceAll("\\", "/")).replace(/^\.\//u, "");
  if (!isTracked(rel)) throw new UsageError(`${arg}: the memory history records the workspace's markdown files, by their path inside the workspace (e.g. MEMORY.md, memory/2026-11-25.md).`);
  return rel;
}

async function log(store: GitStore, file: string | undefined, when: (ms: number) => string, io: MemoryIo): Promise<number> {
  const lines = (await fileChanges(store, file)).map(({ commit }) => `${commit.oid.slice(0, 7)}  ${when(commit.at)}  ${commitSubject(commit)}`);
  if (lines.length === 0) {
    io.stdout.write(`No recorded change to ${file}.\n`);
    return 0;
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

async function diff(store: GitStore, tracked: TrackedFiles, rev: string | undefined, io: MemoryIo): Promise<number> {
  let before: Map<string, string>;
  let after: Map<string, string>;
  let readAfter: (p: string, oid: string) => Promise<Buffer | null>;
  if (rev === undefined) {
    before = await store.files(store.head());
    after = tracked.scan();
    readAfter = async (p) => tracked.read(p);
  } else {
    const oid = await store.resolve(rev);
    if (!oid) return noSuchRevision(rev, io);
    const commit = await store.readCommit(oid);
    before = await store.files(commit.parent);
    after = await store.files(oid);
    readAfter = (_, blob) => store.readBlob(blob);
  }
  const out: string[] = [];
  for (const p of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const [a, b] = [before.get(p), after.get(p)];
    if (a === b) continue;
    const oldText = a ? (await store.readBlob(a)).toString("utf8") : null;
    const newText = b ? ((await readAfter(p, b))?.toString("utf8") ?? null) : null;
    out.push(unifiedDiff(p, oldText, newText));
  }
  io.stdout.write(out.join(""));
  return 0;
}

async function restore(store: GitStore, tracked: TrackedFiles, file: string, rev: string, when: (ms: number) => string, home: string, io: MemoryIo): Promise<number> {
  const oid = await store.resolve(rev);
  if (!oid) return noSuchRevision(rev, io);
  const commit = await store.readCommit(oid);
  const blob = (await store.files(oid)).get(file);
  if (!blob) {
    io.stderr.write(`hearth: ${file} did not exist at ${oid.slice(0, 7)}; nothing was changed. \`${hearthCmd(`memory log ${file}`)}\` lists its versions.\n`);
    return 1;
  }
  const bytes = await store.readBlob(blob);
  const current = tracked.read(file);
  if (current?.equals(bytes)) {
    io.stdout.write(`${file} is already as it was at ${oid.slice(0, 7)} (${when(commit.at)}); nothing changed.\n`);
    return 0;
  }
  tracked.write(file, bytes);
  // A running daemon records the write as the owner's edit; otherwise it is recorded now, so
  // the next start does not have to guess who made it.
  if (!liveHolder(homePaths(home).lock)) {
    const head = store.head();
    const files = await store.files(head);
    files.set(file, blob);
    await store.commit(files, head, "owner", `owner: restore ${file} to ${oid.slice(0, 7)}\n`, Date.now());
  }
  io.stdout.write(`Restored ${file} as it was at ${oid.slice(0, 7)} (${when(commit.at)}).\n`);
  return 0;
}

function noSuchRevision(rev: string, io: MemoryIo): number {
  io.stderr.write(`hearth: no recorded version "${rev}"; \`${hearthCmd("memory log")}\` lists them (the first 7 characters are enough).\n`);
  return 1;
}

/** "2026-11-25 14:03" in the owner's time zone. */
function timeFormat(timeZone: string): (ms: number) => string {
  const f = new Intl.DateTimeFormat("sv-SE", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return (ms) => f.format(ms);
}
