/** A minimal ustar writer: enough to put a few small files into a container with Docker's putArchive. */

/** One archive member: a directory (no content) or a file. */
export interface TarEntry {
  readonly path: string;
  readonly mode: number;
  readonly content?: Buffer;
}

function octal(value: number, length: number): string {
  return value.toString(8).padStart(length - 1, "0") + "\0";
}

function header(entry: TarEntry): Buffer {
  const block = Buffer.alloc(512, 0);
  const isDirectory = entry.content === undefined;
  const name = isDirectory && !entry.path.endsWith("/") ? `${entry.path}/` : entry.path;
  if (Buffer.byteLength(name) > 100) throw new Error(`tar path too long: ${name}`);
  block.write(name, 0, 100, "utf8");
  block.write(octal(entry.mode, 8), 100, 8, "ascii");
  block.write(octal(0, 8), 108, 8, "ascii");
  block.write(octal(0, 8), 116, 8, "ascii");
  block.write(octal(entry.content?.length ?? 0, 12), 124, 12, "ascii");
  block.write(octal(Math.floor(Date.now() / 1000), 12), 136, 12, "ascii");
  block.write("        ", 148, 8, "ascii");
  block.write(isDirectory ? "5" : "0", 156, 1, "ascii");
  block.write("ustar\0", 257, 6, "ascii");
  block.write("00", 263, 2, "ascii");
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(octal(checksum, 7) + " ", 148, 8, "ascii");
  return block;
}

/** Builds an uncompressed tar archive of the entries. */
export function createTarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(header(entry));
    if (entry.content) {
      parts.push(entry.content);
      const padding = (512 - (entry.content.length % 512)) % 512;
      if (padding) parts.push(Buffer.alloc(padding, 0));
    }
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}
