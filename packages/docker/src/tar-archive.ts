import { PathError, type PathErrorReason } from "@sbx/core";
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

function refuse(path: string, reason: PathErrorReason, message: string): PathError {
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
 * (bounded memory: about 1 MiB is read ahead of the reader). A second entry, a short body or a malformed archive errors the stream.
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
  // Coalesce socket-sized chunks (often 16-64 KiB) into reads of up to 1 MiB: fewer hops through the web stream
  // machinery, and memory stays bounded because the entry is paused while 1 MiB waits for the reader.
  const coalesceBytes = 1024 * 1024;
  const entryStream = entry as unknown as NodeJS.ReadableStream & { pause(): void; resume(): void };
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  entryStream.on("data", (chunk: Buffer) => {
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    if (pendingBytes >= coalesceBytes) entryStream.pause();
    notify();
  });
  entryStream.on("end", () => {
    ended = true;
    notify();
  });
  entryStream.on("error", (error: unknown) => {
    failure = error;
    notify();
  });
  signal?.addEventListener("abort", abort, { once: true });
  let received = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        while (pending.length === 0 && !ended && failure === undefined) await new Promise<void>((resolve) => (wake = resolve));
        if (failure !== undefined) throw failure;
        if (pending.length > 0) {
          const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
          pending.length = 0;
          pendingBytes = 0;
          received += chunk.byteLength;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if (!ended) entryStream.resume();
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
  }, { highWaterMark: 1 });
  return { header: entry.header, body };
}
