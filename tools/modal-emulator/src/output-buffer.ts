/**
 * The output of one stream (an exec's stdout or stderr), kept whole so a reader can (re)open at any byte offset, as
 * Modal's `TaskExecStdioRead` allows. Readers get data as it arrives and end once the stream is closed and drained.
 */

/** Largest `data` payload sent in one stdio message. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

/** An append-only byte buffer with blocking readers. */
export class OutputBuffer {
  private readonly chunks: Buffer[] = [];
  private readonly starts: number[] = [];
  private total = 0;
  private closed = false;
  private wakeups = new Set<() => void>();

  /** Bytes received so far. */
  get length(): number {
    return this.total;
  }

  /** True once no more bytes will arrive. */
  get ended(): boolean {
    return this.closed;
  }

  /** Appends bytes (ignored after `end()`). */
  append(chunk: Buffer): void {
    if (this.closed || chunk.length === 0) return;
    this.starts.push(this.total);
    this.chunks.push(Buffer.from(chunk));
    this.total += chunk.length;
    this.wake();
  }

  /** Marks the end of the stream; readers finish once drained. */
  end(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const wakeups = this.wakeups;
    this.wakeups = new Set();
    for (const wakeup of wakeups) wakeup();
  }

  private slice(offset: number): Buffer | undefined {
    if (offset >= this.total) return undefined;
    let index = this.starts.length - 1;
    while (index > 0 && this.starts[index]! > offset) index--;
    const chunk = this.chunks[index]!;
    const start = offset - this.starts[index]!;
    return chunk.subarray(start, Math.min(chunk.length, start + MAX_MESSAGE_BYTES));
  }

  /** Yields every byte from `offset` on, in non-empty pieces, until the stream ended and was drained, or `signal` aborts. */
  async *readFrom(offset: number, signal: AbortSignal): AsyncGenerator<Buffer> {
    let position = Math.max(0, offset);
    for (;;) {
      if (signal.aborted) return;
      const piece = this.slice(position);
      if (piece) {
        position += piece.length;
        yield piece;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener("abort", done);
          this.wakeups.delete(done);
          resolve();
        };
        this.wakeups.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }
}
