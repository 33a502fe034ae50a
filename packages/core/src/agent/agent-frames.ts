/**
 * Framing of the sbx agent protocol (docs/agent-protocol.md): every frame is
 * `u32 big-endian length of the rest` + `u32 big-endian header length` + a UTF-8 JSON header object + raw body bytes.
 */

/** Largest frame either side accepts (header + body), in bytes; a larger length is a protocol violation. */
export const MAX_AGENT_FRAME_BYTES = 64 * 1024 * 1024;

/** One decoded frame. */
export interface AgentFrame {
  /** The JSON header: always an object with a string `type`. */
  readonly header: Record<string, unknown> & { type: string };
  /** The raw body (output bytes for `stdout`/`stderr` frames; empty otherwise). */
  readonly body: Uint8Array;
}

/** Encodes one frame. */
export function encodeAgentFrame(header: Record<string, unknown>, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const head = Buffer.from(JSON.stringify(header), "utf8");
  const frame = Buffer.allocUnsafe(8 + head.byteLength + body.byteLength);
  frame.writeUInt32BE(4 + head.byteLength + body.byteLength, 0);
  frame.writeUInt32BE(head.byteLength, 4);
  head.copy(frame, 8);
  frame.set(body, 8 + head.byteLength);
  return frame;
}

/** Raised by `AgentFrameDecoder` on bytes that are not a valid frame; the stream cannot be trusted after it. */
export class AgentProtocolViolation extends Error {}

/**
 * Reassembles frames from arbitrary chunks. Memory is bounded: at most one frame (≤ `MAX_AGENT_FRAME_BYTES`) plus
 * one chunk is buffered.
 */
export class AgentFrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameBytes: number = MAX_AGENT_FRAME_BYTES) {}

  /** Adds bytes; returns every frame completed by them. Throws `AgentProtocolViolation` on a malformed frame. */
  push(chunk: Uint8Array): AgentFrame[] {
    if (chunk.byteLength === 0) return [];
    this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.buffered += chunk.byteLength;
    const frames: AgentFrame[] = [];
    for (;;) {
      if (this.buffered < 8) break;
      const prefix = this.peek(8);
      const total = prefix.readUInt32BE(0);
      const headLength = prefix.readUInt32BE(4);
      if (total > this.maxFrameBytes || total < 4 || headLength > total - 4)
        throw new AgentProtocolViolation(`a frame of ${total} bytes (header ${headLength}) is not allowed`);
      if (this.buffered < 4 + total) break;
      const frame = this.take(4 + total);
      let header: unknown;
      try {
        header = JSON.parse(frame.subarray(8, 8 + headLength).toString("utf8"));
      } catch {
        throw new AgentProtocolViolation("a frame header is not JSON");
      }
      if (typeof header !== "object" || header === null || Array.isArray(header) || typeof (header as { type?: unknown }).type !== "string") {
        throw new AgentProtocolViolation("a frame header is not an object with a string type");
      }
      frames.push({ header: header as AgentFrame["header"], body: new Uint8Array(frame.subarray(8 + headLength)) });
    }
    return frames;
  }

  private peek(length: number): Buffer {
    if (this.chunks[0]!.byteLength >= length) return this.chunks[0]!.subarray(0, length);
    return Buffer.concat(this.chunks, this.buffered).subarray(0, length);
  }

  private take(length: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    const taken = Buffer.from(all.subarray(0, length));
    const rest = all.subarray(length);
    this.chunks = rest.byteLength > 0 ? [rest] : [];
    this.buffered = rest.byteLength;
    return taken;
  }
}
