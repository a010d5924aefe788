// Fetched pages, kept for 15 minutes by URL so that a loop does not fetch the same page again.

export const PAGE_TTL_MS = 15 * 60_000;

export class PageCache<T> {
  readonly #entries = new Map<string, { at: number; value: T }>();
  readonly #clock: () => number;
  readonly #max: number;

  constructor(clock: () => number = Date.now, max = 100) {
    this.#clock = clock;
    this.#max = max;
  }

  /** The value stored for `key` less than 15 minutes ago; undefined otherwise. */
  get(key: string): T | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (this.#clock() - e.at >= PAGE_TTL_MS) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: T): void {
    this.#entries.delete(key);
    this.#entries.set(key, { at: this.#clock(), value });
    // Oldest first in a Map: drop from the front.
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
