import { Readable } from "node:stream";
import { InvalidArgumentError } from "../errors/index.js";

/** What callers may pass as file contents: text, bytes, a web stream or an async iterable of bytes. */
export type DataInput = string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Text as UTF-8 bytes; bytes as they are. */
export function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? new TextEncoder().encode(data) : data;
}

/** Any `DataInput` as a web stream (pulled by the backend, so memory stays bounded); anything else is refused. */
export function toStream(data: DataInput, backend: string): ReadableStream<Uint8Array> {
  if (typeof data === "string" || data instanceof Uint8Array) {
    const bytes = toBytes(data);
    return new ReadableStream({
      start(controller) {
        if (bytes.byteLength > 0) controller.enqueue(bytes);
        controller.close();
      },
    });
  }
  if (data instanceof ReadableStream) return data;
  if (isAsyncIterable(data)) return Readable.toWeb(Readable.from(data)) as ReadableStream<Uint8Array>;
  throw new InvalidArgumentError({
    field: "data",
    backend,
    message: "Invalid data: expected a string, a Uint8Array, a ReadableStream or an async iterable of Uint8Array.",
  });
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return typeof value === "object" && value !== null && typeof (value as Partial<AsyncIterable<Uint8Array>>)[Symbol.asyncIterator] === "function";
}
