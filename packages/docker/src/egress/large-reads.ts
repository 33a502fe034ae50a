import type { OnReadOpts, Socket } from "node:net";
import type { Writable } from "node:stream";

/** Size of one large read buffer: the largest single read from an upstream socket (libuv reads 64 KiB by default). */
const LARGE_POOL_BYTES = 1024 * 1024;
/** The buffer size once the process-wide budget is spent (libuv's own read size). */
const SMALL_POOL_BYTES = 64 * 1024;
/**
 * Read buffers held by all connections of this process together, at most: a sandbox opening many connections must
 * not make the host hold 1 MiB per connection. Past it, new buffers are 64 KiB (the speed of Node's default reads).
 */
const LARGE_POOL_BUDGET_BYTES = 64 * 1024 * 1024;
/** Retired pools kept for reuse per connection. */
const SPARE_POOLS = 2;

let budgetUsed = 0;

/** Read options for `net.connect`, and where the bytes go once the caller is ready for them. */
export interface LargeReads {
  readonly onread: OnReadOpts;
  /** Starts writing to `target`: first what arrived before (kept in order), then each read as it comes. */
  pipeTo(socket: Socket, target: Writable): void;
  /** Returns this connection's buffers to the process-wide budget (call once the socket is closed). Idempotent. */
  dispose(): void;
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
 * the steady state allocates (and page-faults) nothing. Buffers are allocated on the first read and counted against a
 * process-wide budget. The socket's `end` and `close` events still fire; only `data` is replaced. Bytes that arrive
 * before `pipeTo` are kept (the socket is paused meanwhile).
 */
export function largeReads(): LargeReads {
  const spare: Pool[] = [];
  let counted = 0;
  let disposed = false;
  const newPool = (): Pool => {
    const reused = spare.pop();
    if (reused) return Object.assign(reused, { offset: 0, pending: 0, retired: false });
    const size = !disposed && budgetUsed + LARGE_POOL_BYTES <= LARGE_POOL_BUDGET_BYTES ? LARGE_POOL_BYTES : SMALL_POOL_BYTES;
    if (!disposed) {
      budgetUsed += size;
      counted += size;
    }
    return { bytes: Buffer.allocUnsafe(size), offset: 0, pending: 0, retired: false };
  };
  const release = (pool: Pool) => {
    if (!pool.retired || pool.pending > 0) return;
    if (!disposed && spare.length < SPARE_POOLS) spare.push(pool);
    else if (!disposed) {
      budgetUsed -= pool.bytes.byteLength;
      counted -= pool.bytes.byteLength;
    }
  };
  let pool: Pool | undefined;
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
        if (pool && pool.bytes.byteLength - pool.offset < Math.min(256 * 1024, pool.bytes.byteLength / 4)) {
          pool.retired = true;
          release(pool);
          pool = undefined;
        }
        pool ??= newPool();
        return pool.bytes.subarray(pool.offset);
      },
      callback: (bytes: number, buffer: Uint8Array) => {
        const chunk = Buffer.from(buffer.buffer, buffer.byteOffset, bytes);
        const owner = pool!;
        owner.offset += bytes;
        if (target) write(chunk, owner);
        else early.push({ chunk, pool: owner });
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
    dispose() {
      if (disposed) return;
      disposed = true;
      budgetUsed -= counted;
      counted = 0;
      spare.length = 0;
    },
  };
}

/** Bytes of read buffers currently counted against the process-wide budget (for tests). */
export function largeReadBudgetUsed(): number {
  return budgetUsed;
}
