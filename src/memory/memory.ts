// The memory service the gateway uses: scoped context with stable epochs, the daily log, the
// memory tools, and the watcher and index that keep them fresh.
import type { Tool } from "../agent/tool.ts";
import type { Exchange } from "./daily-log.ts";
import type { MemoryScope } from "./visibility.ts";

export interface MemoryService {
  /** The scoped workspace context for a session's system prompt, stable within its epoch. */
  context(sessionKey: string, scope: MemoryScope, now: number): string;
  /** Starts a new context epoch for the session (after /new or compaction). */
  resetEpoch(sessionKey: string): void;
  /** Appends a finished exchange to the scope's daily log. Never throws. */
  logExchange(scope: MemoryScope, exchange: Exchange): void;
  tools(): Tool[];
  close(): Promise<void>;
}
