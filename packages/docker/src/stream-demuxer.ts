/**
 * Splits Docker's multiplexed attach stream (8-byte frame header: stream type, three zero bytes, big-endian
 * payload length) into stdout and stderr chunks. Payload bytes are forwarded as they arrive, without waiting
 * for a whole frame, so memory stays bounded; a header split across reads and trailing bytes are handled.
 */
export class StreamDemuxer {
  private readonly header = Buffer.alloc(8);
  private headerFill = 0;
  private remaining = 0;
  private streamType = 0;

  constructor(
    private readonly onStdout: (chunk: Uint8Array) => void,
    private readonly onStderr: (chunk: Uint8Array) => void,
  ) {}

  /** Feeds one chunk read from the socket. */
  push(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (this.remaining === 0) {
        const take = Math.min(8 - this.headerFill, chunk.byteLength - offset);
        this.header.set(chunk.subarray(offset, offset + take), this.headerFill);
        this.headerFill += take;
        offset += take;
        if (this.headerFill === 8) {
          this.streamType = this.header[0]!;
          this.remaining = this.header.readUInt32BE(4);
          this.headerFill = 0;
        }
        continue;
      }
      const take = Math.min(this.remaining, chunk.byteLength - offset);
      const payload = chunk.subarray(offset, offset + take);
      offset += take;
      this.remaining -= take;
      if (this.streamType === 2 || this.streamType === 3) this.onStderr(payload);
      else this.onStdout(payload);
    }
  }

  /** True when the stream ended in the middle of a frame (bytes were promised but never came). */
  get incomplete(): boolean {
    return this.remaining > 0 || this.headerFill > 0;
  }
}
