// The output a command may hand back: capped, so a runaway command cannot fill memory.

const HEAD_BYTES = 512 * 1024;
const TAIL_BYTES = 512 * 1024;

/**
 * Keeps the first and the last 512 KB of a byte stream and counts what fell in between, so a
 * runaway command cannot fill memory and the model still sees how it started and ended.
 */
export class OutputCapture {
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  readonly #tail: Buffer[] = [];
  #tailBytes = 0;
  #dropped = 0;

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.#headBytes < HEAD_BYTES) {
      const take = rest.subarray(0, HEAD_BYTES - this.#headBytes);
      this.#head.push(take);
      this.#headBytes += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    while (this.#tailBytes > TAIL_BYTES) {
      const first = this.#tail[0] as Buffer;
      const excess = this.#tailBytes - TAIL_BYTES;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
        this.#dropped += first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
        this.#dropped += excess;
      }
    }
  }

  text(): string {
    const head = Buffer.concat(this.#head).toString("utf8");
    const tail = Buffer.concat(this.#tail).toString("utf8");
    if (this.#dropped === 0) return head + tail;
    const marker = `[... ${this.#dropped} bytes of output dropped ...]\n`;
    return `${head}${head.endsWith("\n") ? "" : "\n"}${marker}${tail}`;
  }
}

