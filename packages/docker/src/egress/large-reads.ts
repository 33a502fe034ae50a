import type { OnReadOpts, Socket } from "node:net";
import type { Writable } from "node:stream";

/** Size of one read buffer: the largest single read from an upstream socket (libuv reads 64 KiB by default). */
const POOL_BYTES = 1024 * 1024;
/** A read gets at least this much room; a pool with less left is retired. */
const MIN_READ_BYTES = 256 * 1024;
/** Retired pools kept for reuse (per connection). */
const SPARE_POOLS = 2;

/** Read options for `net.connect`, and where the bytes go once the caller is ready for them. */
export interface LargeReads {
  readonly onread: OnReadOpts;
  /** Starts writing to `target`: first what arrived before (kept in order), then each read as it comes. */
  pipeTo(socket: Socket, target: Writable): void;
}

interface Pool {
  readonly bytes: Buffer;
  offset: number;
  /** Chunks of this pool written to the target whose write has not completed yet. */
  pending: number;
  retired: boolean;
}

/**
 * Reads of up to 1 MiB per system call (instead of libuv's 64 KiB), written straight to the target with
 * backpressure (the socket pauses while the target is full). A chunk is a slice of a pool buffer; a pool is reused
 * only after it is full and every write of its slices has completed, so a queued chunk is never overwritten, and
 * the steady state allocates (and page-faults) nothing. The socket's `end` and `close` events still fire; only `data`
 * is replaced. Bytes that arrive before `pipeTo` are kept (the socket is paused meanwhile).
 */
export function largeReads(): LargeReads {
  const spare: Pool[] = [];
  const newPool = (): Pool => {
    const reused = spare.pop();
    if (reused) return Object.assign(reused, { offset: 0, pending: 0, retired: false });
    return { bytes: Buffer.allocUnsafe(POOL_BYTES), offset: 0, pending: 0, retired: false };
  };
  const release = (pool: Pool) => {
    if (pool.retired && pool.pending === 0 && spare.length < SPARE_POOLS) spare.push(pool);
  };
  let pool = newPool();
  let source: Socket | undefined;
  let target: Writable | undefined;
  const early: Array<{ chunk: Buffer; pool: Pool }> = [];
  const write = (chunk: Buffer, owner: Pool) => {
    if (!target || target.destroyed) return;
    owner.pending += 1;
    const flushed = target.write(chunk, () => {
      owner.pending -= 1;
      release(owner);
    });
    if (!flushed) {
      source?.pause();
      target.once("drain", () => source?.resume());
    }
  };
  return {
    onread: {
      buffer: () => {
        if (POOL_BYTES - pool.offset < MIN_READ_BYTES) {
          pool.retired = true;
          release(pool);
          pool = newPool();
        }
        return pool.bytes.subarray(pool.offset);
      },
      callback: (bytes: number, buffer: Uint8Array) => {
        const chunk = Buffer.from(buffer.buffer, buffer.byteOffset, bytes);
        pool.offset += bytes;
        if (target) write(chunk, pool);
        else early.push({ chunk, pool });
        // Before pipeTo, read no more than one chunk ahead (returning false pauses the socket).
        return target !== undefined;
      },
    },
    pipeTo(socket, writable) {
      source = socket;
      target = writable;
      for (const { chunk, pool: owner } of early.splice(0)) write(chunk, owner);
      socket.resume();
    },
  };
}
