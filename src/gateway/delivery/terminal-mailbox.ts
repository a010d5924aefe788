// <home>/terminal-mailbox.json: proactive messages for the terminal (a cron job's answer, the
// heartbeat, a budget notice) that arrived while no `hearth chat` was open. The terminal channel
// keeps them here and hands them to the next interactive chat, which prints them once. Bounded:
// past MAX_LETTERS the oldest go (logged). Written atomically and fsynced before `keep` returns,
// so a run recorded as "kept in the mailbox" is on disk.
import { z } from "zod";
import type { KeptLetter, TerminalLetter, TerminalMailbox } from "../../channels/terminal/channel.ts";
import type { Logger } from "../../process/log.ts";
import { loadJsonFile, salvageArray, writeFileAtomic } from "../../state/storage.ts";
import { localDate, localTime } from "../../process/time.ts";

export const MAX_LETTERS = 50;

const letterSchema = z.object({ from: z.string(), at: z.number(), when: z.string(), text: z.string() });
const fileSchema = z.object({ version: z.literal(1), letters: z.array(letterSchema) });

export class TerminalMailboxFile implements TerminalMailbox {
  readonly #path: string;
  readonly #log: Logger;
  readonly #timezone: string;
  #letters: KeptLetter[];

  private constructor(path: string, log: Logger, timezone: string, letters: KeptLetter[]) {
    this.#path = path;
    this.#log = log;
    this.#timezone = timezone;
    this.#letters = letters;
  }

  static open(path: string, log: Logger, timezone: string, now: number): TerminalMailboxFile {
    const loaded = loadJsonFile(path, {
      schema: fileSchema,
      log,
      versions: { current: 1, steps: [] },
      now,
      salvage: (raw) => {
        const letters = (raw as { letters?: unknown } | null)?.letters;
        const kept = salvageArray(letters, "letters", letterSchema);
        return kept.value.length > 0 ? { value: { version: 1 as const, letters: kept.value }, dropped: kept.dropped } : null;
      },
    });
    return new TerminalMailboxFile(path, log, timezone, loaded.status === "ok" ? loaded.value.letters.slice(-MAX_LETTERS) : []);
  }

  keep(letter: TerminalLetter): void {
    const kept: KeptLetter = { ...letter, when: `${localDate(letter.at, this.#timezone)} ${localTime(letter.at, this.#timezone)}` };
    const letters = [...this.#letters, kept];
    const dropped = letters.length - MAX_LETTERS;
    if (dropped > 0) this.#log.warn("mailbox.dropped_oldest", { dropped, kept: MAX_LETTERS });
    this.#save(letters.slice(Math.max(0, dropped)));
  }

  /**
   * Hands out what waits. When the emptied file cannot be written (a full disk), the letters are
   * still handed out and forgotten in memory: the file keeps them, so after a restart they are
   * shown again — a repeat, never a loss, and never a chat left waiting.
   */
  takeAll(): KeptLetter[] {
    const letters = this.#letters;
    if (letters.length === 0) return letters;
    try {
      this.#save([]);
    } catch (err) {
      this.#log.error("mailbox.clear_failed", { path: this.#path, error: err, action: "shown now; the file keeps them until it can be written" });
      this.#letters = [];
    }
    return letters;
  }

  count(): number {
    return this.#letters.length;
  }

  /** On disk first, then in memory: a failed write (a full disk) leaves both as they were and throws. */
  #save(letters: KeptLetter[]): void {
    writeFileAtomic(this.#path, `${JSON.stringify({ version: 1, letters })}\n`);
    this.#letters = letters;
  }
}
