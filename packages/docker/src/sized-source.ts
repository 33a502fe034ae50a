import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";

/** Bytes kept in memory before an upload of unknown length is spooled to a host temp file. */
export const IN_MEMORY_UPLOAD_BYTES = 8 * 1024 * 1024;

/** A byte source whose length is known, as a tar header needs. */
export interface SizedSource {
  readonly size: number;
  readonly chunks: AsyncIterable<Uint8Array>;
  /** Removes any spool file. */
  cleanup(): Promise<void>;
}

async function* fromList(list: readonly Uint8Array[], rest?: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const chunk of list) yield chunk;
  if (rest) for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * Gives a stream a known length with bounded memory: uses `sizeBytes` when the caller knows it; otherwise keeps
 * up to 8 MiB (or what the caller already holds in one chunk) in memory, and spools anything longer to a
 * private temp file on the host.
 */
export async function toSizedSource(data: ReadableStream<Uint8Array>, sizeBytes?: number): Promise<SizedSource> {
  const reader = data as unknown as AsyncIterable<Uint8Array>;
  if (sizeBytes !== undefined) return { size: sizeBytes, chunks: reader, async cleanup() {} };
  const iterator = reader[Symbol.asyncIterator]();
  const held: Uint8Array[] = [];
  let heldBytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { size: heldBytes, chunks: fromList(held), async cleanup() {} };
    held.push(next.value);
    heldBytes += next.value.byteLength;
    if (heldBytes > IN_MEMORY_UPLOAD_BYTES) break;
  }
  const directory = await mkdtemp(join(tmpdir(), "sbx-upload-"));
  const spoolPath = join(directory, "data");
  const output = createWriteStream(spoolPath, { mode: 0o600 });
  try {
    await finished(Readable.from(fromList(held, iterator)).pipe(output));
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  held.length = 0;
  const { size } = await stat(spoolPath);
  return {
    size,
    chunks: createReadStream(spoolPath, { highWaterMark: 1024 * 1024 }),
    cleanup: () => rm(directory, { recursive: true, force: true }),
  };
}
