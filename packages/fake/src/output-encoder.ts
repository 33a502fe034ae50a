/**
 * just-bash hands output back as JavaScript strings: text as Unicode, but raw bytes (from `printf '\377'`, binary
 * stdin, ...) as Latin-1 characters, with no marker saying which. This turns one stream's strings back into bytes:
 * a string is taken as raw bytes when every character is below U+0100 and, read as bytes, it is valid UTF-8, or
 * holds bytes that never occur in UTF-8 text (C1 controls, 0xFE, 0xFF), or continues or leaves unfinished a
 * multi-byte sequence; otherwise it is text and encoded as UTF-8. Heuristic: documented as a limit of the fake.
 */
export class OutputEncoder {
  private pendingContinuation = false;

  /** Encodes the next chunk of the stream. */
  encode(text: string): Uint8Array {
    if (text.length === 0) return new Uint8Array(0);
    let highBytes = false;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code > 0xff) {
        this.pendingContinuation = false;
        return new TextEncoder().encode(text);
      }
      if (code >= 0x80) highBytes = true;
    }
    const bytes = new Uint8Array(Buffer.from(text, "latin1"));
    if (!highBytes) {
      this.pendingContinuation = false;
      return bytes;
    }
    const shape = utf8Shape(bytes);
    const raw =
      shape.valid ||
      shape.unfinishedTail ||
      (this.pendingContinuation && shape.leadingContinuations > 0) ||
      bytes.some((byte) => (byte >= 0x80 && byte <= 0x9f) || byte === 0xfe || byte === 0xff);
    if (!raw) {
      this.pendingContinuation = false;
      return new TextEncoder().encode(text);
    }
    this.pendingContinuation = shape.unfinishedTail;
    return bytes;
  }
}

/** Whether bytes are valid UTF-8, end inside a multi-byte sequence, and how many continuation bytes they start with. */
function utf8Shape(bytes: Uint8Array): { valid: boolean; unfinishedTail: boolean; leadingContinuations: number } {
  let leadingContinuations = 0;
  while (leadingContinuations < bytes.length && (bytes[leadingContinuations]! & 0xc0) === 0x80) leadingContinuations++;
  let valid = leadingContinuations === 0;
  let unfinishedTail = false;
  let index = leadingContinuations;
  let clean = true;
  while (index < bytes.length) {
    const byte = bytes[index]!;
    const length = byte < 0x80 ? 1 : byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    if (length === 0) {
      clean = false;
      break;
    }
    let complete = true;
    for (let offset = 1; offset < length; offset++) {
      if (index + offset >= bytes.length) {
        unfinishedTail = true;
        complete = false;
        break;
      }
      if ((bytes[index + offset]! & 0xc0) !== 0x80) {
        clean = false;
        complete = false;
        break;
      }
    }
    if (!complete) break;
    index += length;
  }
  valid = valid && clean && !unfinishedTail;
  return { valid, unfinishedTail: unfinishedTail && clean, leadingContinuations };
}
