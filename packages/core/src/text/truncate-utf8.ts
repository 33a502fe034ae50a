/** A prefix of a text that fits a UTF-8 byte budget (see `truncateUtf8`). */
export interface Utf8Prefix {
  /** The kept text: the longest prefix whose UTF-8 form fits the budget, never ending inside a character. */
  readonly text: string;
  /** The kept text's size in UTF-8 bytes (at most `maxBytes`). */
  readonly byteLength: number;
  /** True when something was cut (the whole text did not fit). */
  readonly truncated: boolean;
}

/** Options of `truncateUtf8`. */
export interface TruncateUtf8Options {
  /** The byte budget, a non-negative integer; the kept text's UTF-8 form is at most this long. */
  readonly maxBytes: number;
}

/**
 * Cuts `text` to at most `maxBytes` bytes of UTF-8 without splitting a character: the one helper sbx uses wherever
 * text meets a byte budget (output caps, the AI SDK and MCP tools), so a cut never ends in a broken character.
 *
 * Linear in the kept size, whatever the input size: a UTF-16 code unit is at least one UTF-8 byte, so the first
 * `maxBytes` code units always hold the answer. They are encoded once, the cut steps back over at most three
 * continuation bytes to a character start, and the kept bytes are decoded once. A lone surrogate (not valid in
 * UTF-8) is kept as U+FFFD, as every UTF-8 encoder writes it.
 * @example truncateUtf8("héllo", { maxBytes: 2 }) // { text: "h", byteLength: 1, truncated: true }
 */
export function truncateUtf8(text: string, options: TruncateUtf8Options): Utf8Prefix {
  const maxBytes = Math.max(0, Math.floor(options.maxBytes));
  // A UTF-16 code unit is at most three UTF-8 bytes: a text this short fits without encoding it.
  if (text.length * 3 <= maxBytes) return { text, byteLength: Buffer.byteLength(text, "utf8"), truncated: false };
  const window = text.length > maxBytes ? text.slice(0, maxBytes) : text;
  const bytes = Buffer.from(window, "utf8");
  const wholeTextFits = window.length === text.length && bytes.byteLength <= maxBytes;
  if (wholeTextFits) return { text, byteLength: bytes.byteLength, truncated: false };
  if (bytes.byteLength <= maxBytes) {
    // Only reachable when the window ends on a whole character: no cut inside one.
    return { text: window, byteLength: bytes.byteLength, truncated: true };
  }
  let end = maxBytes;
  // Step back over UTF-8 continuation bytes (10xxxxxx) to the first byte of the character the budget cuts.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString("utf8"), byteLength: end, truncated: true };
}
