// Questions still waiting for the owner (`<home>/approvals-pending.json`), so that a restart
// finds the ones it left: their buttons are taken away (the run that asked is gone, and a press
// on them must not run anything), and the run, retried by the inbox's recovery, asks again.
import { channelIdSchema } from "../channels/registry.ts";
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { loadJsonFile, salvageArray, writeFileAtomic } from "../state/storage.ts";

const pendingSchema = z.object({
  key: z.string(),
  /** Where the question is and its message id; absent while it is being sent (a crash then leaves a message the daemon cannot find). */
  shown: z.object({ to: z.object({ channel: channelIdSchema, chatId: z.string(), threadId: z.string().optional() }), messageId: z.string() }).optional(),
  text: z.string(),
  session: z.string(),
  tool: z.string(),
  command: z.string(),
  folder: z.string(),
  at: z.number(),
});
export type PendingQuestion = z.output<typeof pendingSchema>;
const fileSchema = z.object({ pending: z.array(pendingSchema) });

export class PendingQuestions {
  readonly #path: string;
  readonly #log: Logger;
  #items: PendingQuestion[];

  constructor(path: string, log: Logger, now: number) {
    this.#path = path;
    this.#log = log;
    const loaded = loadJsonFile(path, {
      schema: fileSchema,
      log,
      now,
      salvage: (raw) => {
        const s = salvageArray((raw as { pending?: unknown } | null)?.pending, "pending", pendingSchema);
        return { value: { pending: s.value }, dropped: s.dropped };
      },
    });
    this.#items = loaded.status === "ok" ? loaded.value.pending : [];
  }

  /** What a previous process left waiting; the store forgets them as it hands them out. */
  takeLeftovers(): PendingQuestion[] {
    const left = this.#items;
    this.#items = [];
    if (left.length > 0) this.#save();
    return left;
  }

  add(q: PendingQuestion): void {
    this.#items.push(q);
    this.#save();
  }

  /** The question `key` is on the platform now, as `shown`. */
  shown(key: string, shown: NonNullable<PendingQuestion["shown"]>): void {
    const q = this.#items.find((i) => i.key === key);
    if (!q) return;
    q.shown = shown;
    this.#save();
  }

  remove(key: string): void {
    const before = this.#items.length;
    this.#items = this.#items.filter((q) => q.key !== key);
    if (this.#items.length !== before) this.#save();
  }

  #save(): void {
    try {
      writeFileAtomic(this.#path, `${JSON.stringify({ pending: this.#items }, null, 2)}\n`);
    } catch (err) {
      // The question stands in memory; only a restart would miss it.
      this.#log.error("approvals.pending_write_failed", { error: err });
    }
  }
}
