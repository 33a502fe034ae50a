import type { OnReadOpts, Socket } from "node:net";
import type { Writable } from "node:stream";

/** Largest single read from an upstream socket (libuv reads 64 KiB at a time by default). */
const POOL_BYTES = 1024 * 1024;
/** A read gets at least this much room; a pool with less left is replaced. */
const MIN_READ_BYTES = 256 * 1024;

/** Read options for `net.connect`, and where the bytes go once the caller is ready for them. */
export interface LargeReads {
  readonly onread: OnReadOpts;
  /** Starts writing to `target`: first what arrived before (kept in order), then each read as it comes. */
  pipeTo(socket: Socket, target: Writable): void;
}

/**
 * Reads of up to 1 MiB per system call (instead of libuv's 64 KiB), written straight to the target with
 * backpressure (the socket pauses while the target is full). Reads land in fresh slices of a pool that is never
 * reused, so a chunk still queued in the target is never overwritten. The socket's `end` and `close` events still
 * fire; only `data` is replaced. Bytes that arrive before `pipeTo` are kept (the socket is paused meanwhile).
 */
export function largeReads(): LargeReads {
  let pool = Buffer.allocUnsafe(POOL_BYTES);
  let offset = 0;
  let source: Socket | undefined;
  let target: Writable | undefined;
  const early: Buffer[] = [];
  const write = (chunk: Buffer) => {
    if (!target || target.destroyed) return;
    if (!target.write(chunk)) {
      source?.pause();
      target.once("drain", () => source?.resume());
    }
  };
  return {
    onread: {
      buffer: () => {
        if (POOL_BYTES - offset < MIN_READ_BYTES) {
          pool = Buffer.allocUnsafe(POOL_BYTES);
          offset = 0;
        }
        return pool.subarray(offset);
      },
      callback: (bytes: number, buffer: Uint8Array) => {
        const chunk = Buffer.from(buffer.buffer, buffer.byteOffset, bytes);
        offset += bytes;
        if (target) write(chunk);
        else early.push(chunk);
        // Before pipeTo, read no more than one chunk ahead (returning false pauses the socket).
        return target !== undefined;
      },
    },
    pipeTo(socket, writable) {
      source = socket;
      target = writable;
      for (const chunk of early.splice(0)) write(chunk);
      socket.resume();
    },
  };
}
