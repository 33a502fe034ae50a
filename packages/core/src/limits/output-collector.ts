import { truncateUtf8 } from "../text/truncate-utf8.js";
/** Default bytes kept per stream: 16 MiB. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Keeps up to `limitBytes` of one output stream, counts everything, and forwards decoded text to a listener
 * in order. Memory stays bounded however much the command prints.
 */
export class OutputCollector {
  private readonly chunks: Uint8Array[] = [];
  private keptBytes = 0;
  private producedBytes = 0;
  private readonly decoder = new TextDecoder("utf-8");
  private readonly listeners: Array<(text: string) => void> = [];

  constructor(private readonly limitBytes: number) {}

  /** Adds a listener for decoded text. */
  onText(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  /** Accepts one chunk from the backend. */
  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.producedBytes += chunk.byteLength;
    const room = this.limitBytes - this.keptBytes;
    if (room > 0) {
      const kept = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(kept.slice());
      this.keptBytes += kept.byteLength;
    }
    if (this.listeners.length > 0) {
      const text = this.decoder.decode(chunk, { stream: true });
      if (text.length > 0) for (const listener of this.listeners) listener(text);
    }
  }

  /** Flushes a character split at the very end (emitted as U+FFFD). */
  finish(): void {
    if (this.listeners.length === 0) return;
    const rest = this.decoder.decode();
    if (rest.length > 0) for (const listener of this.listeners) listener(rest);
  }

  /** The kept bytes. The chunks are merged once and the merged copy kept, so the kept output is held only once. */
  bytes(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0]!;
    const out = new Uint8Array(this.keptBytes);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    this.chunks.length = 0;
    if (out.byteLength > 0) this.chunks.push(out);
    return out;
  }

  /** The kept bytes as UTF-8 text. */
  text(): string {
    return new TextDecoder("utf-8").decode(this.bytes());
  }

  /** Whether output went past the limit. */
  get truncated(): boolean {
    return this.producedBytes > this.limitBytes;
  }

  /** Bytes produced, including dropped ones. */
  get totalBytes(): number {
    return this.producedBytes;
  }
}

/**
 * A single-consumer async queue of text, closed when the stream ends. At most `limitBytes` (UTF-8) of unread
 * text is kept; text arriving while the queue is full is dropped, so an unread stream cannot grow memory without bound.
 */
export class TextChannel implements AsyncIterable<string> {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private waiting: ((result: IteratorResult<string>) => void) | undefined;
  private ended = false;

  /** @param limitBytes most unread text kept, in UTF-8 bytes. Default: no limit. */
  constructor(private readonly limitBytes: number = Number.POSITIVE_INFINITY) {}

  /** Adds text (dropped, or cut at a character boundary, when the unread queue is full). */
  push(text: string): void {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: text, done: false });
      return;
    }
    const room = this.limitBytes - this.queuedBytes;
    const kept = truncateUtf8(text, { maxBytes: room });
    if (kept.text.length === 0) return;
    this.queue.push(kept.text);
    this.queuedBytes += kept.byteLength;
  }

  /** Ends the stream. */
  end(): void {
    this.ended = true;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return {
      next: () => {
        if (this.queue.length > 0) {
          const text = this.queue.shift()!;
          this.queuedBytes -= Buffer.byteLength(text);
          return Promise.resolve({ value: text, done: false });
        }
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
    };
  }
}
