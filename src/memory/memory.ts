// The memory service the gateway uses: scoped context with stable epochs, the daily log, the
// memory tools, and the watcher and index that keep them fresh.
import { lstatSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { localDate } from "../time.ts";
import type { Tool } from "../agent/tool.ts";
import type { Logger } from "../log.ts";
import { ContextCache } from "./context.ts";
import { appendToDailyLog, dailyLogRelPath, formatExchange, WorkspaceWriteError, type Exchange } from "./daily-log.ts";
import { ContextEpochs } from "./epochs.ts";
import { type IndexWork, SearchIndex } from "./search-index.ts";
import { createMemoryTools } from "./tools.ts";
import type { MemoryScope } from "./visibility.ts";
import { isInChatFolder, WorkspaceWatcher, type WorkspaceEvent } from "./watcher.ts";

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
  /** Appends a finished exchange to the scope's daily log. Never throws. */
  logExchange(scope: MemoryScope, exchange: Exchange): void;
  tools(): Tool[];
  /** When a workspace markdown file last changed (a hand edit or the daemon's own write); 0 when none did since start. */
  lastChangeAt(): number;
  /**
   * Calls `listener` with every settled workspace event (the skills registry's feed). It must
   * be quick and must not throw. Returns the function that unsubscribes.
   */
  onWorkspaceEvent(listener: (e: WorkspaceEvent) => void): () => void;
  /** Folders the workspace watcher watches (diagnostics and tests). */
  watchedFolders(): number;
  /** What the search index read and wrote since start (diagnostics and tests). */
  indexWork(): IndexWork;
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
}

/** How long start-up waits for the watcher's first scan (see openMemory). */
const WATCHER_WAIT_MS = 500;

export async function openMemory(opts: MemoryOptions): Promise<MemoryService> {
  const { workspace, timezone, log } = opts;
  const clock = opts.clock ?? Date.now;
  const cache = new ContextCache({ workspace, timezone, log });
  const epochs = new ContextEpochs(cache);
  const index = SearchIndex.open(opts.indexPath, log);

  let lastChangeAt = 0;
  const refresh = (relPath: string) => {
    lastChangeAt = clock();
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
  // Awaited for at most WATCHER_WAIT_MS: chokidar's first scan takes about a second per 10,000
  // files, and readiness (socket, channels) must not wait for that. A usual workspace is
  // watched well within it, so an edit right after start is seen as before.
  const watcher = WorkspaceWatcher.begin({
    workspace,
    log,
    onEvent: (e) => {
      for (const l of listeners) l(e);
      // The daemon's own appends were indexed when they were written (indexAppend); only an
      // edit by someone else needs the file read again, and syncFile's content hash keeps an
      // edit that changed nothing from rewriting anything.
      if (e.handEdit) refresh(e.relPath);
      else lastChangeAt = clock();
      if (e.handEdit) {
        log.info("memory.hand_edit", { path: e.relPath, kind: e.kind });
        epochs.noteHandEdit(e.relPath);
      } else {
        epochs.noteOwnWrite(e.relPath);
      }
    },
    onWorkspaceGone: () => {
      log.warn("memory.workspace_gone", { workspace, action: "recreating it from the templates" });
      opts.restoreWorkspace();
      epochs.noteWorkspaceReplaced();
    },
  });
  const watching = await Promise.race([watcher.ready.then(() => true), sleep(WATCHER_WAIT_MS, false, { ref: false })]);
  if (!watching) {
    const from = clock();
    log.info("memory.watcher_scanning", { waitedMs: WATCHER_WAIT_MS, note: "a large workspace: edits are watched once the scan ends" });
    void watcher.ready.then(() => log.info("memory.watcher_ready", { ms: clock() - from }));
  }
  // The daemon's own writes: tell the watcher (so its event is not taken for a hand edit) and
  // the epochs (so running sessions keep their prompt bytes) at once; the event comes later.
  const noteOwnWrite = (relPath: string) => {
    lastChangeAt = clock();
    noteChatOwnWrite(relPath);
    watcher.expectOwnWrite(relPath);
    epochs.noteOwnWrite(relPath);
  };
  const tools = createMemoryTools({ workspace, timezone, index, clock, onOwnWrite: noteOwnWrite, log });

  // Shared chats' folders are not watched (watcher.ts): a chat's files are checked here, by
  // size and mtime against what was last seen or written by the daemon, when its context is
  // read — one lstat per run. A difference is a hand edit, handled as the watcher's would be.
  const chatFileSeen = new Map<string, string>();
  const signature = (relPath: string) => {
    const st = lstatSync(path.join(workspace, relPath), { throwIfNoEntry: false });
    return st ? `${st.size}:${st.mtimeMs}:${st.ino}` : "none";
  };
  const checkChatFile = (relPath: string) => {
    const now = signature(relPath);
    const before = chatFileSeen.get(relPath);
    chatFileSeen.set(relPath, now);
    if (before === undefined || before === now) return;
    log.info("memory.hand_edit", { path: relPath, kind: now === "none" ? "unlink" : "change" });
    refresh(relPath);
    epochs.noteHandEdit(relPath);
  };
  const noteChatOwnWrite = (relPath: string) => {
    if (isInChatFolder(relPath.split("/"))) chatFileSeen.set(relPath, signature(relPath));
  };

  // A full scan catches edits made while the daemon was down. It runs after start-up so the
  // first (possibly long) build of a large workspace does not delay readiness.
  // In slices that yield to the event loop: a first build of a large workspace must not hold
  // up readiness, channels or answers; searches meanwhile say the index is still building.
  let closing = false;
  const scan = setTimeout(() => {
    const started = clock();
    index.reconcileInSlices(workspace, { shouldStop: () => closing }).then(
      (r) => !closing && log.info("memory.index_ready", { ...r, ms: clock() - started }),
      (err: unknown) => log.error("memory.index_scan_failed", { error: err }),
    );
  }, 0);

  return {
    context(sessionKey, scope, now) {
      if (scope.kind === "shared") checkChatFile(dailyLogRelPath(scope, localDate(now, timezone)));
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
    tools: () => tools,
    lastChangeAt: () => lastChangeAt,
    onWorkspaceEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    indexWork: () => ({ ...index.work }),
    watchedFolders: () => watcher.watchedFolders(),
    async close() {
      closing = true;
      clearTimeout(scan);
      await watcher.close();
      index.close();
    },
  };
}
