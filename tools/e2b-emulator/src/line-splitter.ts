/**
 * Splits a byte stream into newline-terminated lines, in time linear in the bytes: each chunk is searched for a
 * newline once (never the bytes kept from earlier chunks again), and a line is decoded as UTF-8 only once it is whole,
 * so a character split between two chunks stays one character. A line of many megabytes (a cell's output flood sent
 * as one message) costs no more than many short lines of the same size.
 */
export class LineSplitter {
  private readonly pending: Buffer[] = [];

  /** Takes the next chunk; returns the lines it completed (without their newline), in order. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf(10, start)) >= 0) {
      this.pending.push(chunk.subarray(start, newline));
      lines.push(Buffer.concat(this.pending).toString("utf8"));
      this.pending.length = 0;
      start = newline + 1;
    }
    // Copied: the caller may reuse the chunk's memory once this returns.
    if (start < chunk.length) this.pending.push(Buffer.from(chunk.subarray(start)));
    return lines;
  }

  /** Drops an unfinished line (a new process starts from a clean state). */
  reset(): void {
    this.pending.length = 0;
  }
}
