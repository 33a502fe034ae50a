/**
 * Ordered stdin for one envd process. envd's `SendInput` is a unary call per write: two writes in flight at once are
 * two HTTP requests, and nothing makes envd handle them in the order they were made. The sbx agent's frames
 * (length-prefixed, ADR 0037) are written without waiting for the previous write, so writes to one process must
 * leave one at a time, in order. Writes made while one is in flight are joined into the next call (up to
 * `MAX_STDIN_CALL_BYTES`), so a burst of small frames costs few round trips.
 */

/** The most bytes one `SendInput` call carries when queued writes are joined, in bytes (a single larger write is sent whole). */
export const MAX_STDIN_CALL_BYTES = 1024 * 1024;

/** One write waiting for its call. */
interface QueuedWrite {
  readonly data: Uint8Array;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Options of `orderedStdinWriter`. */
export interface OrderedStdinWriterOptions {
  /** Sends one chunk to the process's stdin (one `SendInput` call); rejects when the call failed. */
  readonly send: (data: Uint8Array) => Promise<void>;
}

/**
 * Returns a `writeStdin` that sends writes one call at a time, in the order they were made. Each write resolves once
 * the call carrying it succeeded, and rejects with that call's error; a failed call fails only the writes it carried
 * (later writes are still tried: the caller decides whether the stream is broken).
 */
export function orderedStdinWriter(options: OrderedStdinWriterOptions): (data: Uint8Array) => Promise<void> {
  const queue: QueuedWrite[] = [];
  let sending = false;

  const drain = async (): Promise<void> => {
    sending = true;
    try {
      while (queue.length > 0) {
        const batch = takeBatch(queue);
        try {
          await options.send(joined(batch));
          for (const write of batch) write.resolve();
        } catch (error) {
          for (const write of batch) write.reject(error);
        }
      }
    } finally {
      sending = false;
    }
  };

  return (data) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ data, resolve, reject });
      if (!sending) void drain();
    });
}

/** Takes the writes the next call carries: the first one, then more while the total stays within `MAX_STDIN_CALL_BYTES`. */
function takeBatch(queue: QueuedWrite[]): QueuedWrite[] {
  const batch = [queue.shift()!];
  let bytes = batch[0]!.data.byteLength;
  while (queue.length > 0 && bytes + queue[0]!.data.byteLength <= MAX_STDIN_CALL_BYTES) {
    const next = queue.shift()!;
    bytes += next.data.byteLength;
    batch.push(next);
  }
  return batch;
}

/** The writes' bytes as one chunk (the write itself when there is one). */
function joined(batch: readonly QueuedWrite[]): Uint8Array {
  if (batch.length === 1) return batch[0]!.data;
  const total = batch.reduce((sum, write) => sum + write.data.byteLength, 0);
  const chunk = new Uint8Array(total);
  let offset = 0;
  for (const write of batch) {
    chunk.set(write.data, offset);
    offset += write.data.byteLength;
  }
  return chunk;
}
