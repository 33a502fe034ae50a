import { PathError } from "../errors/index.js";

/**
 * File names are bytes on Linux and strings in sbx's API. This is the lossless mapping between them (ADR 0031), the
 * same as Python's `surrogateescape`: valid UTF-8 decodes as usual; each byte of an invalid sequence becomes the lone
 * surrogate U+DC80–U+DCFF carrying that byte. Valid UTF-8 never decodes to a lone surrogate, so distinct names stay
 * distinct strings (`sec\xff` is `"sec\udcff"`, never `"sec\ufffd"`) and a listed name, passed back, names the same
 * file.
 */
export function decodeNameBytes(bytes: Uint8Array): string {
  let text = "";
  let index = 0;
  while (index < bytes.byteLength) {
    const length = validSequenceLength(bytes, index);
    if (length === 0) {
      text += String.fromCharCode(0xdc00 + bytes[index]!);
      index += 1;
      continue;
    }
    text += new TextDecoder().decode(bytes.subarray(index, index + length));
    index += length;
  }
  return text;
}

/** The bytes a name (or path) stands for: the inverse of `decodeNameBytes`; any other lone surrogate is refused. */
export function encodeNameBytes(text: string): Uint8Array {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    const isHigh = unit >= 0xd800 && unit <= 0xdbff;
    const next = text.charCodeAt(index + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      bytes.push(...encoder.encode(text.slice(index, index + 2)));
      index += 1;
      continue;
    }
    if (unit >= 0xdc80 && unit <= 0xdcff) {
      bytes.push(unit - 0xdc00);
      continue;
    }
    if (unit >= 0xd800 && unit <= 0xdfff) {
      throw new PathError({
        path: text,
        reason: "invalid",
        message: `Refused path ${JSON.stringify(text)}: it holds a lone UTF-16 surrogate that stands for no byte (only U+DC80–U+DCFF, which list() uses for bytes that are not UTF-8, do).`,
      });
    }
    bytes.push(...encoder.encode(text[index]!));
  }
  return Uint8Array.from(bytes);
}

/** A name's bytes as lowercase hex: how paths reach the file helper on its command line (any byte survives). */
export function nameHex(text: string): string {
  return Array.from(encodeNameBytes(text), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Length of the valid UTF-8 sequence starting at `index` (no overlong forms, no surrogates, at most U+10FFFF), or 0. */
function validSequenceLength(bytes: Uint8Array, index: number): number {
  const first = bytes[index]!;
  if (first < 0x80) return 1;
  const continuation = (offset: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[index + offset];
    return byte !== undefined && byte >= low && byte <= high;
  };
  if (first >= 0xc2 && first <= 0xdf) return continuation(1) ? 2 : 0;
  if (first === 0xe0) return continuation(1, 0xa0) && continuation(2) ? 3 : 0;
  if (first === 0xed) return continuation(1, 0x80, 0x9f) && continuation(2) ? 3 : 0;
  if (first >= 0xe1 && first <= 0xef) return continuation(1) && continuation(2) ? 3 : 0;
  if (first === 0xf0) return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0;
  if (first >= 0xf1 && first <= 0xf3) return continuation(1) && continuation(2) && continuation(3) ? 4 : 0;
  if (first === 0xf4) return continuation(1, 0x80, 0x8f) && continuation(2) && continuation(3) ? 4 : 0;
  return 0;
}
