import { truncateUtf8 } from "../text/truncate-utf8.js";

/**
 * Keeps up to `limitBytes` (UTF-8) of one text output stream, counts every byte, and drops the rest, so memory stays
 * bounded however much the code prints. The text counterpart of `OutputCollector`, for code channels that deliver
 * decoded text (`runCode`).
 */
export class TextOutputCollector {
  private readonly parts: string[] = [];
  private keptBytes = 0;
  private producedBytes = 0;

  constructor(private readonly limitBytes: number) {}

  /** Accepts one piece of text. */
  push(text: string): void {
    if (typeof text !== "string" || text.length === 0) return;
    const size = Buffer.byteLength(text, "utf8");
    this.producedBytes += size;
    const room = this.limitBytes - this.keptBytes;
    if (room <= 0) return;
    if (size <= room) {
      this.parts.push(text);
      this.keptBytes += size;
      return;
    }
    const kept = truncateUtf8(text, { maxBytes: room });
    this.parts.push(kept.text);
    this.keptBytes += kept.byteLength;
  }

  /** Nothing to flush: text arrives decoded (the counterpart of `OutputCollector.finish`). */
  finish(): void {}

  /** The kept text. The parts are joined once and the joined text kept, so the kept output is held only once. */
  text(): string {
    if (this.parts.length === 1) return this.parts[0]!;
    const joined = this.parts.join("");
    this.parts.length = 0;
    if (joined.length > 0) this.parts.push(joined);
    return joined;
  }

  /** Whether output went past the limit. */
  get truncated(): boolean {
    return this.producedBytes > this.limitBytes;
  }

  /** Bytes produced (UTF-8), including dropped ones. */
  get totalBytes(): number {
    return this.producedBytes;
  }
}
