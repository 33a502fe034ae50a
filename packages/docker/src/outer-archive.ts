import { createReadStream } from "node:fs";
import { Readable } from "node:stream";

const BLOCK = 512;

/** One ustar header block: `name` (at most 100 bytes), mode, size, type `"0"` (file) or `"5"` (directory), owned by root. */
function ustarHeader(entry: { name: string; mode: number; size: number; type: "0" | "5"; modifiedAt: number }): Buffer {
  const header = Buffer.alloc(BLOCK);
  const octal = (value: number, width: number) => value.toString(8).padStart(width - 1, "0") + "\0";
  header.write(entry.name, 0, 100, "utf8");
  header.write(octal(entry.mode, 8), 100, 8, "ascii");
  header.write(octal(0, 8), 108, 8, "ascii");
  header.write(octal(0, 8), 116, 8, "ascii");
  header.write(octal(entry.size, 12), 124, 12, "ascii");
  header.write(octal(Math.floor(entry.modifiedAt / 1000), 12), 136, 12, "ascii");
  header.write("        ", 148, 8, "ascii");
  header.write(entry.type, 156, 1, "ascii");
  header.write("ustar\0", 257, 6, "ascii");
  header.write("00", 263, 2, "ascii");
  let checksum = 0;
  for (const byte of header) checksum += byte;
  header.write(octal(checksum, 7) + " ", 148, 8, "ascii");
  return header;
}

/**
 * A tar stream holding one directory (mode 0755) with one file (mode 0444, owned by root) whose bytes are read from
 * `source` on the host: what `putArchive` puts into the snapshot's build container (ADR 0056). Streamed, never held in
 * memory; `sizeBytes` must be the file's exact size.
 */
export function singleFileArchive(options: { directory: string; name: string; source: string; sizeBytes: number }): Readable {
  const modifiedAt = Date.now();
  const padding = (BLOCK - (options.sizeBytes % BLOCK)) % BLOCK;
  async function* blocks(): AsyncGenerator<Buffer> {
    yield ustarHeader({ name: `${options.directory}/`, mode: 0o755, size: 0, type: "5", modifiedAt });
    yield ustarHeader({ name: `${options.directory}/${options.name}`, mode: 0o444, size: options.sizeBytes, type: "0", modifiedAt });
    for await (const chunk of createReadStream(options.source)) yield chunk as Buffer;
    yield Buffer.alloc(padding + 2 * BLOCK);
  }
  return Readable.from(blocks());
}
