import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { once } from "node:events";
import { InvalidArgumentError, type FileTooLargeError } from "../errors/index.js";
import { concatenateBytes } from "../posix/concatenate-bytes.js";

/** Default largest file `files.read` returns whole (text or bytes): 64 MiB. Raise it with `{ maxBytes }`, or stream. */
export const DEFAULT_READ_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Default largest file `files.download` copies to the host: 1 GiB. A download streams to the host's disk with bounded
 * memory, so this bounds the host's disk, not its memory, and is larger than the whole-read default (64 MiB) so that
 * ordinary artifacts (archives, data sets, checkpoints) need no option; a file the sandbox made for nothing (a sparse
 * `truncate -s 3G`) is refused before a byte is written. Raise it with `{ maxBytes }` (ADR 0028).
 */
export const DEFAULT_DOWNLOAD_LIMIT_BYTES = 1024 * 1024 * 1024;

/** Default time limit of a file operation that is not a streamed transfer (stat, list, remove, whole reads...): 60 s. */
export const DEFAULT_FILE_TIMEOUT_MS = 60_000;

/** Validates an optional positive integer option (`maxBytes`, `timeoutMs`). */
export function requireLimit(value: unknown, field: string, backend: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidArgumentError({ field, backend, message: `Invalid ${field}: expected a positive integer, got ${JSON.stringify(value)}.` });
  }
  return value;
}

/**
 * Reads a stream whole, refusing once more than `limitBytes` arrived: the stream is cancelled (so the backend stops
 * sending) and `tooLarge(seenBytes)` is thrown. Memory never holds more than `limitBytes` plus one chunk.
 */
export async function readWithLimit(
  stream: ReadableStream<Uint8Array>,
  limitBytes: number,
  tooLarge: (seenBytes: number) => Promise<FileTooLargeError>,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      chunks.length = 0;
      await reader.cancel().catch(() => {});
      throw await tooLarge(total);
    }
    chunks.push(value);
  }
  return concatenateBytes(chunks);
}

/**
 * A stream that passes bytes through, pulled one chunk at a time (bounded memory), and errors with
 * `tooLarge(seenBytes)` once more than `limitBytes` went by. The source is cancelled first, so the backend stops
 * sending (and can answer the size question `tooLarge` may ask).
 */
export function limitedStream(
  stream: ReadableStream<Uint8Array>,
  limitBytes: number | undefined,
  tooLarge: (seenBytes: number) => Promise<FileTooLargeError>,
): ReadableStream<Uint8Array> {
  if (limitBytes === undefined) return stream;
  const reader = stream.getReader();
  let total = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        total += value.byteLength;
        if (total <= limitBytes) return controller.enqueue(value);
        await reader.cancel().catch(() => {});
        controller.error(await tooLarge(total));
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Streams a sandbox file to a host path with bounded memory (one chunk at a time, waiting for the disk). With
 * `limitBytes`, refuses once more bytes arrived: the source is cancelled and `tooLarge(seenBytes)` thrown. On any
 * failure the partial host file is removed before the error is thrown.
 */
export async function boundedDownload(
  stream: ReadableStream<Uint8Array>,
  hostPath: string,
  options: { limitBytes?: number; signal?: AbortSignal; tooLarge: (seenBytes: number) => Promise<FileTooLargeError> },
): Promise<void> {
  const reader = stream.getReader();
  const output = createWriteStream(hostPath);
  const failed = new Promise<never>((_resolve, reject) => output.once("error", reject));
  failed.catch(() => {});
  let total = 0;
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason ?? new Error("aborted");
      const { value, done } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (options.limitBytes !== undefined && total > options.limitBytes) {
        await reader.cancel().catch(() => {});
        output.destroy();
        await rm(hostPath, { force: true });
        throw await options.tooLarge(total);
      }
      if (!output.write(value)) await Promise.race([once(output, "drain"), failed]);
    }
    await Promise.race([new Promise<void>((resolve) => output.end(resolve)), failed]);
  } catch (error) {
    await reader.cancel().catch(() => {});
    output.destroy();
    await rm(hostPath, { force: true });
    throw error;
  }
}
