/**
 * How a plain-HTTP request's body is delimited, decided from its head (RFC 9112 §6.3), so the proxy forwards exactly
 * one request and nothing after it. Ambiguous framing is refused before anything is forwarded (see egress-proxy.ts).
 */
export type BodyFraming = { readonly kind: "none" } | { readonly kind: "length"; readonly length: number } | { readonly kind: "chunked" };

/** Longest chunk-size line or trailer section the framer accepts (bytes). */
const MAX_CHUNK_LINE_BYTES = 1024;
const MAX_TRAILER_BYTES = 16 * 1024;

/** A body that does not parse exactly (a bare LF, a bad chunk size, a missing CRLF after chunk data). */
export class BodyFramingError extends Error {}

/** What one `push` found: the bytes that belong to the body, whether the body ended, and what came after it. */
export interface FramedChunk {
  readonly body: Buffer;
  readonly done: boolean;
  /** Bytes after the end of the body (a pipelined request): never forwarded. */
  readonly after: Buffer;
}

/** Tracks one request body as its bytes arrive and says where it ends. */
export interface BodyFramer {
  /** Feeds the next bytes from the client; throws `BodyFramingError` when they do not frame a body exactly. */
  push(chunk: Buffer): FramedChunk;
  /** True once the whole body was seen. */
  readonly done: boolean;
}

const CRLF = Buffer.from("\r\n");

/** A framer for `framing`: counts a Content-Length body, or walks chunked framing to its last chunk and trailers. */
export function bodyFramer(framing: BodyFraming): BodyFramer {
  if (framing.kind === "chunked") return chunkedFramer();
  let remaining = framing.kind === "length" ? framing.length : 0;
  return {
    get done() {
      return remaining === 0;
    },
    push(chunk) {
      const taken = Math.min(remaining, chunk.byteLength);
      remaining -= taken;
      return { body: chunk.subarray(0, taken), done: remaining === 0, after: chunk.subarray(taken) };
    },
  };
}

type ChunkedState = "size" | "data" | "data-end" | "trailer" | "done";

function chunkedFramer(): BodyFramer {
  let state: ChunkedState = "size";
  let line = Buffer.alloc(0);
  let dataLeft = 0;
  let trailerBytes = 0;
  /** Reads up to and including the next CRLF into `line`; returns the index after it in `chunk`, or -1 if not yet. */
  const readLine = (chunk: Buffer, from: number, limit: number): number => {
    const newline = chunk.indexOf(0x0a, from);
    const end = newline < 0 ? chunk.byteLength : newline + 1;
    line = Buffer.concat([line, chunk.subarray(from, end)]);
    if (line.byteLength > limit) throw new BodyFramingError("a chunk-size or trailer line is too long");
    if (newline < 0) return -1;
    if (line.byteLength < 2 || line[line.byteLength - 2] !== 0x0d) throw new BodyFramingError("a bare LF in the chunked body");
    if (line.subarray(0, line.byteLength - 2).includes(0x0d)) throw new BodyFramingError("a bare CR in the chunked body");
    return end;
  };
  return {
    get done() {
      return state === "done";
    },
    push(chunk) {
      let at = 0;
      while (at < chunk.byteLength && state !== "done") {
        if (state === "data") {
          const taken = Math.min(dataLeft, chunk.byteLength - at);
          dataLeft -= taken;
          at += taken;
          if (dataLeft === 0) {
            state = "data-end";
            line = Buffer.alloc(0);
          }
          continue;
        }
        if (state === "data-end") {
          const wanted = CRLF.byteLength - line.byteLength;
          const piece = chunk.subarray(at, at + wanted);
          line = Buffer.concat([line, piece]);
          at += piece.byteLength;
          if (!CRLF.subarray(0, line.byteLength).equals(line)) throw new BodyFramingError("chunk data not followed by CRLF");
          if (line.byteLength === CRLF.byteLength) {
            state = "size";
            line = Buffer.alloc(0);
          }
          continue;
        }
        const limit = state === "size" ? MAX_CHUNK_LINE_BYTES : MAX_TRAILER_BYTES - trailerBytes;
        const next = readLine(chunk, at, limit);
        if (next < 0) {
          at = chunk.byteLength;
          continue;
        }
        at = next;
        const text = line.subarray(0, line.byteLength - 2).toString("latin1");
        line = Buffer.alloc(0);
        if (state === "size") {
          // eslint-disable-next-line no-control-regex -- control characters in a chunk extension are what is refused
          const size = /^([0-9a-fA-F]{1,15})(;[^\x00-\x08\x0a-\x1f\x7f]*)?$/.exec(text);
          if (!size) throw new BodyFramingError(`malformed chunk size ${JSON.stringify(text.slice(0, 40))}`);
          dataLeft = Number.parseInt(size[1]!, 16);
          state = dataLeft === 0 ? "trailer" : "data";
        } else {
          trailerBytes += text.length + 2;
          if (text.length === 0) state = "done";
          // eslint-disable-next-line no-control-regex -- control characters in a trailer line are what is refused
          else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[^\x00-\x08\x0a-\x1f\x7f]*$/.test(text)) throw new BodyFramingError("a malformed trailer line");
        }
      }
      return { body: chunk.subarray(0, at), done: state === "done", after: chunk.subarray(at) };
    },
  };
}
