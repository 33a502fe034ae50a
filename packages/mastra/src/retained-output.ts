/**
 * The newest `limitBytes` (UTF-8) of a text stream, as Mastra's `maxRetainedBytes` defines retention: when the limit
 * is passed the oldest output is dropped, and how many bytes were dropped is counted. A cut never splits a character.
 */
export class RetainedOutput {
  readonly #limitBytes: number;
  readonly #chunks: Buffer[] = [];
  #keptBytes = 0;
  #droppedBytes = 0;

  /** @param limitBytes most bytes kept (0 keeps nothing). */
  constructor(limitBytes: number) {
    this.#limitBytes = limitBytes;
  }

  /** Adds text at the end, dropping the oldest bytes past the limit. */
  append(text: string): void {
    const chunk = Buffer.from(text, "utf8");
    this.#chunks.push(chunk);
    this.#keptBytes += chunk.byteLength;
    while (this.#keptBytes > this.#limitBytes && this.#chunks.length > 0) {
      const first = this.#chunks[0]!;
      const excess = this.#keptBytes - this.#limitBytes;
      if (first.byteLength <= excess) {
        this.#chunks.shift();
        this.#keptBytes -= first.byteLength;
        this.#droppedBytes += first.byteLength;
        continue;
      }
      let cut = excess;
      // Step past continuation bytes (10xxxxxx) so the kept text starts on a character.
      while (cut < first.byteLength && (first[cut]! & 0xc0) === 0x80) cut += 1;
      this.#chunks[0] = first.subarray(cut);
      this.#keptBytes -= cut;
      this.#droppedBytes += cut;
    }
  }

  /** The kept text. */
  text(): string {
    return Buffer.concat(this.#chunks).toString("utf8");
  }

  /** Bytes dropped from the front. */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }
}
