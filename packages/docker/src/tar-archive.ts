import { PathError } from "@sbx/core";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as tar from "tar-stream";

/** Header fields of the one entry sbx writes. */
export interface FileEntryHeader {
  /** Base name of the file (no slashes). */
  readonly name: string;
  readonly size: number;
  readonly uid: number;
  readonly gid: number;
  readonly mode?: number;
}

/**
 * Builds an uncompressed tar with exactly one regular file, streaming `data` (which must yield exactly
 * `header.size` bytes) with backpressure. Never compressed: compressed uploads made older engines run the
 * container's decompressor as host root (CVE-2026-41567).
 */
export function packSingleFile(header: FileEntryHeader, data: AsyncIterable<Uint8Array>, signal?: AbortSignal): Readable {
  if (header.name.length === 0 || header.name.includes("/") || header.name === "." || header.name === ".." || header.name.includes("\0")) {
    throw new PathError({ path: header.name, reason: "invalid", backend: "docker", message: `Refused to archive ${JSON.stringify(header.name)}: an entry name must be one plain path segment.` });
  }
  const pack = tar.pack();
  const entry = pack.entry({ name: header.name, size: header.size, type: "file", mode: header.mode ?? 0o644, uid: header.uid, gid: header.gid, mtime: new Date() });
  let written = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of data) {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      written += chunk.byteLength;
      if (written > header.size) throw new Error(`the data is longer than the ${header.size} bytes announced`);
      yield chunk;
    }
    if (written !== header.size) throw new Error(`the data ended after ${written} of the ${header.size} bytes announced`);
  }
  pipeline(Readable.from(counted(), { objectMode: false, highWaterMark: 1024 * 1024 }), entry as unknown as NodeJS.WritableStream).then(
    () => pack.finalize(),
    (error: Error) => pack.destroy(error),
  );
  return pack as unknown as Readable;
}

/** What a download yields: the entry's header and a stream of its bytes. */
export interface ArchiveEntry {
  readonly header: tar.Header;
  readonly body: ReadableStream<Uint8Array>;
}

function refuse(path: string, reason: string, message: string): PathError {
  return new PathError({ path, reason, backend: "docker", message });
}

/**
 * Checks one header from the engine's archive: it must be exactly the requested file's base name, with no
 * directory part, and a regular file. Anything else (escaping names, hardlinks, symlinks, devices, FIFOs,
 * directories) is refused here, on the host, before a byte is used; nothing is ever extracted with a
 * library's path logic.
 */
export function checkEntryHeader(header: tar.Header, expectedName: string, path: string): void {
  const name = header.name;
  if (name !== expectedName && name !== `${expectedName}/`) {
    throw refuse(path, "invalid", `Refused the engine's archive for ${JSON.stringify(path)}: unexpected entry name ${JSON.stringify(name)} (absolute, '..' or nested names are never accepted).`);
  }
  if (header.type === "file" || header.type === "contiguous-file") return;
  const kind = header.type === "symlink" ? `a symbolic link to ${JSON.stringify(header.linkname ?? "")}` : header.type === "link" ? "a hard link" : header.type === "directory" ? "a directory" : header.type === "fifo" ? "a FIFO" : header.type === "character-device" || header.type === "block-device" ? "a device" : `an entry of type ${header.type}`;
  throw refuse(path, "not-a-regular-file", `Refused to read ${JSON.stringify(path)}: it is ${kind}, not a regular file. Symbolic links are never followed by the files API.`);
}

/**
 * Reads the single entry of a tar stream from the engine and returns its bytes as a pull-based stream
 * (bounded memory: at most 8 socket chunks are queued ahead of the reader). A second entry, a short body or a malformed archive errors the stream.
 */
export async function readSingleEntry(source: Readable, expectedName: string, path: string, signal?: AbortSignal): Promise<ArchiveEntry> {
  const extract = tar.extract();
  source.on("error", (error) => extract.destroy(error));
  source.pipe(extract as unknown as NodeJS.WritableStream);
  const entries = extract[Symbol.asyncIterator]();
  const abort = () => {
    source.destroy();
    extract.destroy();
  };
  const first = await entries.next();
  if (first.done) {
    abort();
    throw refuse(path, "not-a-regular-file", `Refused to read ${JSON.stringify(path)}: the engine returned an empty archive.`);
  }
  const entry = first.value;
  try {
    checkEntryHeader(entry.header, expectedName, path);
  } catch (error) {
    abort();
    throw error;
  }
  const chunks = entry[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  signal?.addEventListener("abort", abort, { once: true });
  let received = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (!next.done) {
          received += next.value.byteLength;
          controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
          return;
        }
        if (received !== entry.header.size) throw new Error(`the archive ended after ${received} of ${entry.header.size} bytes`);
        const after = await entries.next();
        if (!after.done) throw refuse(path, "invalid", `Refused the engine's archive for ${JSON.stringify(path)}: it holds more than one entry.`);
        signal?.removeEventListener("abort", abort);
        controller.close();
      } catch (error) {
        signal?.removeEventListener("abort", abort);
        abort();
        controller.error(signal?.aborted ? (signal.reason ?? error) : error);
      }
    },
    cancel() {
      signal?.removeEventListener("abort", abort);
      abort();
    },
  }, { highWaterMark: 8 });
  return { header: entry.header, body };
}
