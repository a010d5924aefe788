// The memory service the gateway uses: scoped context with stable epochs, the daily log, the
// memory tools, and the watcher and index that keep them fresh.
import { existsSync, lstatSync } from "node:fs";
import path from "node:path";
import { localDate } from "../process/time.ts";
import type { Tool } from "../agent/tool.ts";
import type { Logger } from "../process/log.ts";
import { Provenance } from "./provenance.ts";
import { ContextCache, contextFiles } from "./context.ts";
import { appendToDailyLog, formatExchange, WorkspaceWriteError, type Exchange } from "./daily-log.ts";
import { ContextEpochs } from "./epochs.ts";
import { type IndexWork, SearchIndex } from "./search/search-index.ts";
import { createMemoryTools } from "./tools.ts";
import type { EmbeddingsConfig } from "./search/embeddings.ts";
import type { HybridHooks } from "./search/hybrid.ts";
import type { MemoryScope } from "./visibility.ts";
import { isInChatFolder, WorkspaceWatcher, type WorkspaceEvent } from "./watcher.ts";
import { MemoryHistory, type UndoResult } from "./history/history.ts";

export interface MemoryService {
  /** The scoped workspace context for a session's system prompt, stable within its epoch. */
  context(sessionKey: string, scope: MemoryScope, now: number): string;
  /** Starts a new context epoch for the session (after /new or compaction). */
  resetEpoch(sessionKey: string): void;
  /** The session went idle: drop its context snapshot (the next run assembles a new one). */
  forgetSession(sessionKey: string): void;
  /** Sessions holding a context snapshot, and the distinct texts they share. */
  contextStats(): { snapshots: number; texts: number };
  /**
   * The daemon itself wrote `relPath` (media text: a transcript, a PDF's text): indexed now,
   * as chat folders are not watched, and not taken for a hand edit. Never throws.
   */
  indexOwnFile(relPath: string): void;
  /**
   * The owner rewrote `relPath` through Hearth (the dashboard's editor): a hand edit, taken at
   * once (index and a new context epoch for the sessions that show it), so the next prompt has
   * it without waiting for the watcher, whose event for it is then not counted again. Never throws.
   */
  noteOwnerEdit(relPath: string): void;
  /** Appends a finished exchange to the scope's daily log. Never throws. */
  logExchange(scope: MemoryScope, exchange: Exchange): void;
  tools(): Tool[];
  /** Which workspace files carry outside content; null where no record is kept (tests without a home). */
  readonly provenance: Provenance | null;
  /** When a workspace markdown file last changed (a hand edit or the daemon's own write); 0 when none did since start. */
  lastChangeAt(): number;
  /**
   * Calls `listener` with every settled workspace event (the skills registry's feed). It must
   * be quick and must not throw. Returns the function that unsubscribes.
   */
  onWorkspaceEvent(listener: (e: WorkspaceEvent) => void): () => void;
  /**
   * Starts the background work: the watcher's first scan and the index build. The gateway calls
   * it once start-up is done; until then (and until the scan ends) context files are checked
   * by lstat on every read instead. Idempotent; does nothing after close().
   */
  startBackground(): void;
  /** Resolves once the watcher covers the whole workspace (never, without startBackground). */
  watching(): Promise<void>;
  /** Folders the workspace watcher watches (diagnostics and tests). */
  watchedFolders(): number;
  /** What the search index read and wrote since start (diagnostics and tests). */
  indexWork(): IndexWork;
  /** `/undo`: reverts Hearth's newest memory change (history/history.ts); null without a history. */
  undoLast(): Promise<UndoResult | null>;
  /** Metering and the budget for embeddings calls (set once the ledger exists); nothing without embeddings. */
  setEmbeddingHooks(hooks: HybridHooks): void;
  close(): Promise<void>;
}

export interface MemoryOptions {
  workspace: string;
  /** `<home>/index/memory.db`: a cache, rebuilt when missing or corrupt. */
  indexPath: string;
  timezone: string;
  log: Logger;
  clock?: () => number;
  /** Puts the template files back when the workspace folder was deleted while running. */
  restoreWorkspace: () => void;
  /** `<home>/history.git`: where the memory history is kept; absent, none is kept. */
  historyDir?: string;
  /** Hybrid recall (search/hybrid.ts): the embeddings service and `<home>/index/vectors.db`; absent: keywords alone. */
  embeddings?: { config: EmbeddingsConfig; file: string };
  /** `<home>/provenance.jsonl`: which workspace files carry outside content; absent, none is kept. */
  provenanceFile?: string;
}

export async function openMemory(opts: MemoryOptions): Promise<MemoryService> {
  const { workspace, timezone, log } = opts;
  const clock = opts.clock ?? Date.now;
  const cache = new ContextCache({ workspace, timezone, log });
  const epochs = new ContextEpochs(cache);
  const index = SearchIndex.open(opts.indexPath, log);
  const provenance = opts.provenanceFile ? new Provenance({ file: opts.provenanceFile, workspace, log, clock }) : null;
  provenance?.recover();
  const history = opts.historyDir ? new MemoryHistory({ gitdir: opts.historyDir, workspace, log, clock }) : null;
  // Loaded only when embeddings are configured: without them nothing of hybrid recall runs.
  const hybrid = opts.embeddings ? (await import("./search/hybrid.ts")).HybridSearch.open({ index, ...opts.embeddings, log }) : null;

  let lastChangeAt = 0;
  const refresh = (relPath: string) => {
    lastChangeAt = clock();
    hybrid?.schedule();
    try {
      index.refreshFile(workspace, relPath);
    } catch (err) {
      log.warn("memory.index_refresh_failed", { path: relPath, error: err });
    }
  };
  const listeners = new Set<(e: WorkspaceEvent) => void>();
  const indexAppend = (relPath: string, offset: number) => {
    try {
      index.appendToFile(workspace, relPath, offset);
    } catch (err) {
      log.warn("memory.index_refresh_failed", { path: relPath, error: err });
    }
  };
  const onWatcherEvent = (e: WorkspaceEvent) => {
    for (const l of listeners) l(e);
    // The daemon's own appends were indexed when they were written (indexAppend); only an
    // edit by someone else needs the file read again, and syncFile's content hash keeps an
    // edit that changed nothing from rewriting anything.
    if (e.handEdit) {
      history?.note(e.relPath, "owner");
      refresh(e.relPath);
      log.info("memory.hand_edit", { path: e.relPath, kind: e.kind });
      epochs.noteHandEdit(e.relPath);
    } else {
      lastChangeAt = clock();
      epochs.noteOwnWrite(e.relPath);
    }
  };

  // Files no watcher reports on are checked by size, mtime and inode when a context showing
  // them is read — one lstat each. A difference from what was last seen (or written by the
  // daemon) is a hand edit, handled as the watcher's would be. That is always so for shared
  // chats' files (their folders are not watched, watcher.ts), and for every context file until
  // the watcher's first scan is done: readiness does not wait for that scan, and a hand edit
  // made meanwhile must still reach the next prompt.
  let watcherReady = false;
  const seen = new Map<string, string>();
  const signature = (relPath: string) => {
    const st = lstatSync(path.join(workspace, relPath), { throwIfNoEntry: false });
    return st ? `${st.size}:${st.mtimeMs}:${st.ino}` : "none";
  };
  const unwatched = (relPath: string) => !watcherReady || isInChatFolder(relPath.split("/"));
  const checkFile = (relPath: string) => {
    const now = signature(relPath);
    const before = seen.get(relPath);
    seen.set(relPath, now);
    if (before === undefined || before === now) return;
    log.info("memory.hand_edit", { path: relPath, kind: now === "none" ? "unlink" : "change" });
    history?.note(relPath, "owner");
    refresh(relPath);
    epochs.noteHandEdit(relPath);
  };
  /** The watcher covers the whole workspace from now on: a last check of what it may have missed. */
  const handOverToWatcher = () => {
    watcherReady = true;
    for (const relPath of [...seen.keys()]) {
      if (isInChatFolder(relPath.split("/"))) continue;
      checkFile(relPath);
      seen.delete(relPath);
    }
  };

  let watcher: WorkspaceWatcher | null = null;
  // The daemon's own writes: tell the watcher (so its event is not taken for a hand edit) and
  // the epochs (so running sessions keep their prompt bytes) at once; the event comes later.
  const noteOwnWrite = (relPath: string) => {
    lastChangeAt = clock();
    hybrid?.schedule();
    if (unwatched(relPath)) seen.set(relPath, signature(relPath));
    watcher?.expectOwnWrite(relPath);
    epochs.noteOwnWrite(relPath);
    history?.note(relPath, "hearth");
  };
  const tools = createMemoryTools({ workspace, timezone, index, clock, onOwnWrite: noteOwnWrite, log, ...(hybrid ? { hybrid } : {}), ...(provenance ? { origins: provenance } : {}) });

  let closing = false;
  const shouldStop = () => closing;
  let background: Promise<void> | null = null;
  let markWatching: () => void = () => {};
  const watching = new Promise<void>((resolve) => (markWatching = resolve));
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  const onWorkspaceGone = () => {
    log.warn("memory.workspace_gone", { workspace, action: "recreating it from the templates" });
    opts.restoreWorkspace();
    epochs.noteWorkspaceReplaced();
  };
  // The watcher's first scan (about a second per 10,000 files) and the index build, which
  // catches up with edits made while the daemon was down, run once start-up is done, so
  // readiness does not depend on the workspace's size. The build runs in slices that yield to
  // the event loop; searches meanwhile say the index is still building. A file edited before
  // the watcher reached its folder has no event: a second, stat-only pass once the watcher is
  // ready reads again whatever changed size or mtime since the first pass saw it.
  const runBackground = async () => {
    const started = clock();
    const w = WorkspaceWatcher.begin({ workspace, log, onEvent: onWatcherEvent, onWorkspaceGone });
    watcher = w;
    const build = index.reconcileInSlices(workspace, { shouldStop });
    build.catch(() => {}); // not unhandled while the scan runs: awaited (and reported) below
    await Promise.race([w.ready, closed]);
    if (closing) return;
    // Deleted before the watcher got to it: no event will say so.
    if (!existsSync(workspace)) onWorkspaceGone();
    handOverToWatcher();
    log.info("memory.watcher_ready", { ms: clock() - started, folders: w.watchedFolders() });
    markWatching();
    const first = await build;
    if (closing) return;
    const again = await index.reconcileInSlices(workspace, { shouldStop });
    if (closing) return;
    const total = { added: first.added + again.added, updated: first.updated + again.updated, removed: first.removed + again.removed };
    log.info("memory.index_ready", { ...total, ms: clock() - started });
    hybrid?.schedule(0);
  };

  return {
    startBackground() {
      if (background || closing) return;
      history?.start();
      background = runBackground().catch((err: unknown) => log.error("memory.index_scan_failed", { error: err }));
    },
    watching: () => watching,
    context(sessionKey, scope, now) {
      const date = localDate(now, timezone);
      for (const f of contextFiles(scope, date)) if (unwatched(f.relPath)) checkFile(f.relPath);
      return epochs.get(sessionKey, scope, now).text;
    },
    resetEpoch: (sessionKey) => epochs.reset(sessionKey),
    forgetSession: (sessionKey) => epochs.forget(sessionKey),
    contextStats: () => epochs.stats(),
    logExchange(scope, exchange) {
      try {
        const { relPath, offset } = appendToDailyLog(workspace, scope, exchange.at, timezone, formatExchange(exchange, timezone), log);
        noteOwnWrite(relPath);
        indexAppend(relPath, offset);
      } catch (err) {
        // A refused or failed append was logged once for its path where it happened.
        if (!(err instanceof WorkspaceWriteError)) log.error("memory.daily_log_failed", { error: err });
      }
    },
    indexOwnFile(relPath) {
      try {
        noteOwnWrite(relPath);
      } catch (err) {
        log.warn("memory.index_refresh_failed", { path: relPath, error: err });
      }
      refresh(relPath);
    },
    noteOwnerEdit(relPath) {
      lastChangeAt = clock();
      if (unwatched(relPath)) seen.set(relPath, signature(relPath));
      watcher?.expectOwnWrite(relPath);
      log.info("memory.hand_edit", { path: relPath, kind: "dashboard" });
      epochs.noteHandEdit(relPath);
      refresh(relPath);
    },
    tools: () => tools,
    provenance,
    lastChangeAt: () => lastChangeAt,
    onWorkspaceEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    indexWork: () => ({ ...index.work }),
    undoLast: async () => (history ? history.undoLast() : null),
    setEmbeddingHooks(hooks) {
      if (hybrid) hybrid.hooks = hooks;
    },
    watchedFolders: () => watcher?.watchedFolders() ?? 0,
    async close() {
      closing = true;
      markClosed();
      // At once: the history's time to record (history.ts HISTORY_STOP_MS) counts from the stop
      // request, beside the watcher's and the index build's ends, not after them.
      const historyClosed = history?.close();
      await watcher?.close();
      await background;
      await historyClosed;
      hybrid?.close();
      index.close();
    },
  };
}
