import { FileTooLargeError, ProviderError } from "../errors/index.js";

/** Longest size header the read script prints (`<decimal size>\n`); more without a newline is not a header. */
const MAX_HEADER_BYTES = 24;
const NEWLINE = 0x0a;

/**
 * Turns the read script's output (`<size>\n` then the file's bytes, ADR 0026) into the file's bytes, held to the size
 * the script reported when it opened the file: a stream that ends with fewer bytes (a channel that cut the output,
 * a helper killed midway) or more (the file grew while it was read) errors with a retryable `ProviderError` instead
 * of closing, so a short read is never a result. This holds for every adapter whose reads run core's script. With
 * `maxBytes`, a file the script reports larger than that is refused at the header with `FileTooLargeError` (its
 * exact size), before any of its bytes are streamed.
 */
export function sizeCheckedReadBody(body: ReadableStream<Uint8Array>, path: string, backend?: string, maxBytes?: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let header = new Uint8Array(0);
  let expectedBytes: number | undefined;
  let receivedBytes = 0;
  const mismatch = (what: string) =>
    new ProviderError({
      backend,
      retryable: true,
      message: `Reading ${JSON.stringify(path)} ended ${what}: the file was ${expectedBytes} bytes when the read began and ${receivedBytes} bytes arrived (the output was cut, or the file changed while it was read). Nothing short is returned; read it again.`,
    });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            if (expectedBytes === undefined)
              return controller.error(
                new ProviderError({
                  backend,
                  retryable: true,
                  message: `Reading ${JSON.stringify(path)} ended before the read helper reported the file's size. Read it again.`,
                }),
              );
            if (receivedBytes !== expectedBytes) return controller.error(mismatch("early"));
            return controller.close();
          }
          let chunk = value;
          if (expectedBytes === undefined) {
            const joined = new Uint8Array(header.byteLength + chunk.byteLength);
            joined.set(header);
            joined.set(chunk, header.byteLength);
            const newline = joined.indexOf(NEWLINE);
            if (newline < 0) {
              if (joined.byteLength > MAX_HEADER_BYTES)
                return controller.error(
                  new ProviderError({
                    backend,
                    message: `Reading ${JSON.stringify(path)}: the read helper's output did not begin with the file's size.`,
                  }),
                );
              header = joined;
              continue;
            }
            const text = new TextDecoder().decode(joined.subarray(0, newline));
            if (!/^\d+$/.test(text))
              return controller.error(
                new ProviderError({
                  backend,
                  message: `Reading ${JSON.stringify(path)}: the read helper's output did not begin with the file's size.`,
                }),
              );
            expectedBytes = Number(text);
            if (maxBytes !== undefined && expectedBytes > maxBytes) {
              await reader.cancel().catch(() => {});
              return controller.error(new FileTooLargeError({ backend, path, sizeBytes: expectedBytes, limitBytes: maxBytes, option: "maxBytes" }));
            }
            chunk = joined.subarray(newline + 1);
          }
          receivedBytes += chunk.byteLength;
          if (receivedBytes > expectedBytes) {
            await reader.cancel().catch(() => {});
            return controller.error(mismatch("late, with more bytes than the file had"));
          }
          if (chunk.byteLength === 0) continue;
          return controller.enqueue(chunk);
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
