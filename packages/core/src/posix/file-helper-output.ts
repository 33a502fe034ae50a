import { ProviderError } from "../errors/index.js";
import type { FileEntry } from "../v1/sandbox.js";
import { decodeNameBytes } from "./name-bytes.js";

const NEWLINE = 0x0a;
const TYPES: Record<string, FileEntry["type"]> = { f: "file", d: "directory", l: "symlink", o: "other" };
const STAT_LINE = /^sbx-stat ([fdlo]) (\d{1,20}) (-?\d{1,20})$/;
const LIST_HEADER = /^sbx-list (\d{1,9})$/;
const ENTRY_LINE = /^([fdlo]) (\d{1,20}) (-?\d{1,20}) (\d{1,3})$/;

/**
 * Reads the file helper's output (ADR 0031) exactly: every line must match, every length and count must agree, and
 * nothing may follow the end. Anything else is a `ProviderError` (never a partial or invented result).
 */
class StrictReader {
  private offset = 0;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
    private readonly backend?: string,
  ) {}

  refuse(why: string): ProviderError {
    return new ProviderError({
      backend: this.backend,
      message: `The file helper's answer to ${this.what} is malformed (${why}); nothing from it is used.`,
    });
  }

  line(): string {
    const end = this.bytes.indexOf(NEWLINE, this.offset);
    if (end < 0 || end - this.offset > 128) throw this.refuse("a line is missing or too long");
    const line = this.bytes.subarray(this.offset, end);
    if (line.some((byte) => byte < 0x20 || byte > 0x7e)) throw this.refuse("a line holds bytes that are not printable ASCII");
    this.offset = end + 1;
    return new TextDecoder().decode(line);
  }

  take(length: number): Uint8Array {
    if (this.offset + length + 1 > this.bytes.byteLength || this.bytes[this.offset + length] !== NEWLINE)
      throw this.refuse("a name's length does not match");
    const taken = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length + 1;
    return taken;
  }

  end(): void {
    if (this.offset !== this.bytes.byteLength) throw this.refuse(`${this.bytes.byteLength - this.offset} bytes follow its end`);
  }
}

function entryOf(reader: StrictReader, match: RegExpMatchArray | null, name: string, path: string): FileEntry {
  if (!match) throw reader.refuse("a record does not parse");
  const size = Number(match[2]);
  const seconds = Number(match[3]);
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(seconds)) throw reader.refuse("a number is out of range");
  return { name, path, type: TYPES[match[1]!]!, size, modifiedAt: new Date(seconds * 1000) };
}

/** The entry `stat` describes: exactly one `sbx-stat` line. */
export function parseStatOutput(bytes: Uint8Array, path: string, backend?: string): FileEntry {
  const reader = new StrictReader(bytes, `stat ${JSON.stringify(path)}`, backend);
  const entry = entryOf(reader, reader.line().match(STAT_LINE), path.slice(path.lastIndexOf("/") + 1), path);
  reader.end();
  return entry;
}

/** The entries of one listing: the count in the header, each name by its length, names unique, `sbx-end`, nothing after. */
export function parseListOutput(bytes: Uint8Array, folder: string, backend?: string): FileEntry[] {
  const reader = new StrictReader(bytes, `list ${JSON.stringify(folder)}`, backend);
  const header = reader.line().match(LIST_HEADER);
  if (!header) throw reader.refuse("the header does not parse");
  const count = Number(header[1]);
  const entries: FileEntry[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < count; index++) {
    const record = reader.line().match(ENTRY_LINE);
    const nameBytes = reader.take(Number(record?.[4] ?? 0));
    if (nameBytes.byteLength === 0 || nameBytes.includes(0x2f) || nameBytes.includes(0)) throw reader.refuse("a name is empty or holds '/' or NUL");
    const name = decodeNameBytes(nameBytes);
    if (name === "." || name === ".." || seen.has(name)) throw reader.refuse(`the name ${JSON.stringify(name)} is not a distinct entry`);
    seen.add(name);
    entries.push(entryOf(reader, record, name, folder === "/" ? `/${name}` : `${folder}/${name}`));
  }
  if (reader.line() !== "sbx-end") throw reader.refuse("the end marker is missing");
  reader.end();
  return entries;
}
