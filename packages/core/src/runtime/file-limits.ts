import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { InvalidArgumentError, type FileTooLargeError } from "../errors/index.js";

/** Default largest file `files.read` returns whole (text or bytes): 64 MiB. Raise it with `{ maxBytes }`, or stream. */
export const DEFAULT_READ_LIMIT_BYTES = 64 * 1024 * 1024;

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
export async function readWithLimit(stream: ReadableStream<Uint8Array>, limitBytes: number, tooLarge: (seenBytes: number) => Promise<FileTooLargeError>): Promise<Uint8Array> {
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
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** A stream that passes bytes through and errors with `tooLarge(seenBytes)` once more than `limitBytes` went by. */
export function limitedStream(stream: ReadableStream<Uint8Array>, limitBytes: number | undefined, tooLarge: (seenBytes: number) => Promise<FileTooLargeError>): ReadableStream<Uint8Array> {
  if (limitBytes === undefined) return stream;
  let total = 0;
  return stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > limitBytes) controller.error(await tooLarge(total));
      else controller.enqueue(chunk);
    },
  }), {});
}

/**
 * Streams a sandbox file to a host path with bounded memory (backpressure end to end). With `limitBytes`, refuses
 * once more bytes arrived. On any failure the partial host file is removed before the error is thrown.
 */
export async function boundedDownload(stream: ReadableStream<Uint8Array>, hostPath: string, options: { limitBytes?: number; signal?: AbortSignal; tooLarge: (seenBytes: number) => Promise<FileTooLargeError> }): Promise<void> {
  let total = 0;
  let refusal: FileTooLargeError | undefined;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.byteLength;
      if (options.limitBytes !== undefined && total > options.limitBytes) {
        options.tooLarge(total).then((error) => {
          refusal = error;
          callback(error);
        }, callback);
        return;
      }
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(stream as import("node:stream/web").ReadableStream<Uint8Array>), counter, createWriteStream(hostPath), { signal: options.signal });
  } catch (error) {
    await rm(hostPath, { force: true });
    throw refusal ?? error;
  }
}
