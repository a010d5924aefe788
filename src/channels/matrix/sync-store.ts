// Where the Matrix sync position lives between runs: matrix-js-sdk's in-memory store, plus the
// accumulated sync (rooms' state and recent timeline, account data, the `since` token) written
// to `<home>/matrix/sync.json`. It is written only once every message of a sync response is in
// Hearth's inbox (the handlers' promises, `hold`), so a restart resumes from a position whose
// messages are all safe: nothing is lost, and what the inbox already has is not answered again.
// The file holds what the homeserver sent (encrypted rooms' messages stay encrypted in it).
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { MemoryStore, type ISyncResponse } from "matrix-js-sdk";
import type { ISavedSync } from "matrix-js-sdk/lib/store/index.js";
import { SyncAccumulator } from "matrix-js-sdk/lib/sync-accumulator.js";
import type { Logger } from "../../process/log.ts";
import { writeFileAtomic } from "../../state/storage.ts";

export class FileSyncStore extends MemoryStore {
  readonly #file: string;
  readonly #log: Logger;
  readonly #accumulator = new SyncAccumulator();
  readonly #saved: boolean;
  #pending: Promise<unknown>[] = [];
  /** Runs before a position is written: the crypto store's flush, so no room key is newer on disk than its delivery. */
  beforeSave: (() => Promise<void>) | undefined;

  constructor(file: string, log: Logger) {
    super();
    this.#file = file;
    this.#log = log;
    this.#saved = this.#load();
  }

  /** Whether an earlier run left a sync position (else the first sync is the account's history, not news). */
  get resumes(): boolean {
    return this.#saved;
  }

  /** `p` settles once a message of the sync being processed is in the inbox (or refused); the position waits for it. */
  hold(p: Promise<unknown>): void {
    this.#pending.push(p);
  }

  override async getSavedSync(): Promise<ISavedSync | null> {
    if (!this.#saved) return null;
    const data = this.#accumulator.getJSON();
    return { nextBatch: data.nextBatch, roomsData: data.roomsData, accountData: data.accountData };
  }

  override async getSavedSyncToken(): Promise<string | null> {
    return this.#saved ? this.#accumulator.getNextBatchToken() || null : null;
  }

  /** Called by the SDK after it emitted every event of `data`: the position is kept once their handlers settled. */
  override async setSyncData(data: ISyncResponse): Promise<void> {
    this.#accumulator.accumulate(data);
    const pending = this.#pending;
    this.#pending = [];
    await Promise.allSettled(pending);
    await this.beforeSave?.();
    try {
      mkdirSync(path.dirname(this.#file), { recursive: true, mode: 0o700 });
      writeFileAtomic(this.#file, JSON.stringify(this.#accumulator.getJSON(true)));
    } catch (error) {
      this.#log.warn("matrix.sync_not_saved", { error });
    }
  }

  override wantsSave(): boolean {
    return false;
  }

  #load(): boolean {
    if (!existsSync(this.#file)) return false;
    try {
      const data = JSON.parse(readFileSync(this.#file, "utf8")) as { nextBatch: string; roomsData: ISyncResponse["rooms"]; accountData: Array<{ type: string; content: object }> };
      if (typeof data.nextBatch !== "string" || !data.nextBatch) return false;
      this.#accumulator.accumulate({ next_batch: data.nextBatch, rooms: data.roomsData, account_data: { events: data.accountData } } as ISyncResponse, true);
      return true;
    } catch (error) {
      this.#log.warn("matrix.sync_unreadable", { file: this.#file, error });
      return false;
    }
  }
}
