import { createReadStream } from "node:fs";
import { rm, stat as hostStat } from "node:fs/promises";
import { Readable } from "node:stream";
import { AbortedError, FileTooLargeError, InvalidArgumentError, SbxError } from "../errors/index.js";
import type { FileReadOptions, SandboxFiles } from "../v1/sandbox.js";
import { toBytes, toStream } from "../limits/data-input.js";
import { withinTime, type IdleWatchdog } from "../limits/deadline.js";
import { runFileCall } from "./file-call.js";
import {
  boundedDownload,
  DEFAULT_DOWNLOAD_LIMIT_BYTES,
  DEFAULT_FILE_TIMEOUT_MS,
  DEFAULT_READ_LIMIT_BYTES,
  limitedStream,
  readWithLimit,
  requireLimit,
} from "../limits/file-limits.js";
import { throwIfAborted } from "../security/guard.js";
import { redactError } from "../security/redaction.js";
import type { SandboxState } from "./sandbox-state.js";
import { requireString } from "../security/validate.js";
import { watchFiles } from "./sandbox-file-watch.js";

/** The formats `files.read` returns. */
const READ_FORMATS = ["text", "bytes", "stream"] as const;

/** `sandbox.files`: confined paths, deadlines, size limits, and streamed host transfers with bounded memory. */
export function createSandboxFiles(state: SandboxState): SandboxFiles {
  const { driver, backend, secretValues } = state;
  const path = (given: unknown) => state.workspacePath(given);

  /** Builds the refusal of a too-large file, with the file's size when the backend can tell it (bounded). */
  function tooLargeFor(target: string, limitBytes: number, option: string, message?: (size: string) => string) {
    return async (seenBytes: number): Promise<FileTooLargeError> => {
      const reported = await withinTime(driver.stat(target, {}), 5_000, () => new Error("stat did not answer")).then(
        (entry) => entry.size,
        () => undefined,
      );
      const known = typeof reported === "number" && reported >= seenBytes;
      const sizeBytes = known ? reported : seenBytes;
      return new FileTooLargeError({
        backend,
        path: target,
        sizeBytes,
        atLeast: !known,
        limitBytes,
        option,
        message: message?.(`${known ? "" : "at least "}${sizeBytes} bytes`),
      });
    };
  }

  /** The refusal of a download over its limit: names the size, the limit (and whether it is the default) and the option. */
  function downloadTooLarge(target: string, limitBytes: number, byDefault: boolean) {
    const limit = byDefault ? `the ${limitBytes}-byte default limit of files.download` : `the ${limitBytes}-byte limit`;
    return tooLargeFor(
      target,
      limitBytes,
      "maxBytes",
      (size) =>
        `Refused to download ${JSON.stringify(target)}: it is ${size}, over ${limit}; nothing was left on the host. Pass a larger { maxBytes } if you mean to copy it.`,
    );
  }

  function read(path: string, options?: FileReadOptions & { format?: "text" }): Promise<string>;
  function read(path: string, options: FileReadOptions & { format: "bytes" }): Promise<Uint8Array>;
  function read(path: string, options: FileReadOptions & { format: "stream" }): Promise<ReadableStream<Uint8Array>>;
  async function read(
    given: string,
    fileOptions?: FileReadOptions & { format?: (typeof READ_FORMATS)[number] },
  ): Promise<string | Uint8Array | ReadableStream<Uint8Array>> {
    state.ensureOpen("read a file");
    const target = path(given);
    const format = fileOptions?.format ?? "text";
    if (!READ_FORMATS.includes(format))
      throw new InvalidArgumentError({
        field: "options.format",
        backend,
        message: `Invalid options.format: expected "text", "bytes" or "stream", got ${JSON.stringify(format)}.`,
      });
    const maxBytes = requireLimit(fileOptions?.maxBytes, "options.maxBytes", backend);
    if (format === "stream") {
      // The deadline covers opening the stream; the caller paces the transfer. The caller's signal still reaches the driver.
      const stream = await runFileCall(
        state,
        "read a file",
        fileOptions,
        DEFAULT_FILE_TIMEOUT_MS,
        () => driver.readFile(target, { signal: fileOptions?.signal, maxBytes }),
        { method: "readFile", detail: target },
      );
      return limitedStream(driver.watchStream("read a file", stream), maxBytes, tooLargeFor(target, maxBytes ?? 0, "maxBytes"));
    }
    const limitBytes = maxBytes ?? DEFAULT_READ_LIMIT_BYTES;
    const bytes = await runFileCall(
      state,
      "read a file",
      fileOptions,
      DEFAULT_FILE_TIMEOUT_MS,
      async (signal) => {
        // The limit goes with the call: a read that knows the size first refuses a larger file at once (ADR 0026).
        const stream = await driver.readFile(target, { signal, maxBytes: limitBytes });
        return readWithLimit(stream, limitBytes, tooLargeFor(target, limitBytes, "maxBytes"));
      },
      { method: "readFile", detail: target },
    );
    return format === "bytes" ? bytes : new TextDecoder().decode(bytes);
  }

  return {
    async write(given, data, fileOptions) {
      state.ensureOpen("write a file");
      const target = path(given);
      throwIfAborted(fileOptions?.signal, backend);
      // Core always passes the length when it knows it (strings and byte arrays), so archive-based adapters never spool.
      const bytes = typeof data === "string" || data instanceof Uint8Array ? toBytes(data) : undefined;
      const stream = toStream(bytes ?? data, backend);
      const sizeBytes = bytes?.byteLength;
      await runFileCall(
        state,
        "write a file",
        fileOptions,
        undefined,
        (signal, watchdog) =>
          driver.writeFile(target, watchdog ? watchdog.observe(stream) : stream, sizeBytes === undefined ? { signal } : { signal, sizeBytes }),
        { method: "writeFile", detail: target },
      );
    },
    read,
    watch: (given, watchOptions) => watchFiles(state, given, watchOptions),
    async list(given, fileOptions) {
      state.ensureOpen("list a directory");
      const target = path(given);
      return runFileCall(state, "list a directory", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.list(target, { signal }), {
        method: "list",
        detail: target,
      });
    },
    async stat(given, fileOptions) {
      state.ensureOpen("stat a file");
      const target = path(given);
      const followSymlinks = fileOptions?.followSymlinks ?? false;
      if (typeof followSymlinks !== "boolean")
        throw new InvalidArgumentError({
          field: "options.followSymlinks",
          backend,
          message: `Invalid options.followSymlinks: expected true or false, got ${JSON.stringify(followSymlinks)}.`,
        });
      const describe = (signal: AbortSignal) => (followSymlinks ? driver.stat(target, { signal, followSymlinks }) : driver.stat(target, { signal }));
      return runFileCall(state, "stat a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, describe, { method: "stat", detail: target });
    },
    async exists(given, fileOptions) {
      state.ensureOpen("check a file");
      const target = path(given);
      try {
        await runFileCall(state, "stat a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.stat(target, { signal }), {
          method: "stat",
          detail: target,
        });
        return true;
      } catch (error) {
        if (SbxError.isInstance(error) && error.code === "SBX_FILE_NOT_FOUND") return false;
        throw error;
      }
    },
    async remove(given, fileOptions) {
      state.ensureOpen("remove a file");
      const target = path(given);
      if (target === driver.workspace)
        throw new InvalidArgumentError({ field: "path", backend, message: "Refusing to remove the workspace itself; remove its entries instead." });
      await runFileCall(
        state,
        "remove a file",
        fileOptions,
        DEFAULT_FILE_TIMEOUT_MS,
        (signal) => driver.remove(target, { recursive: fileOptions?.recursive ?? false, signal }),
        { method: "remove", detail: target },
      );
    },
    async mkdir(given, fileOptions) {
      state.ensureOpen("make a directory");
      const target = path(given);
      await runFileCall(state, "make a directory", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.mkdir(target, { signal }), {
        method: "mkdir",
        detail: target,
      });
    },
    async rename(from, to, fileOptions) {
      state.ensureOpen("rename a file");
      const source = path(from);
      const destination = path(to);
      await runFileCall(state, "rename a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.rename(source, destination, { signal }), {
        method: "rename",
        detail: `${source} -> ${destination}`,
      });
    },
    async upload(hostPath, sandboxPath, fileOptions) {
      state.ensureOpen("upload a file");
      requireString(hostPath, "hostPath");
      const target = path(sandboxPath);
      const info = await hostStat(hostPath).catch(() => undefined);
      if (!info?.isFile())
        throw redactError(
          new InvalidArgumentError({
            field: "hostPath",
            backend,
            message: `Invalid hostPath: ${hostPath} is not a readable regular file on the host.`,
          }),
          secretValues,
        );
      const stream = Readable.toWeb(createReadStream(hostPath, { highWaterMark: 1024 * 1024 })) as ReadableStream<Uint8Array>;
      await runFileCall(
        state,
        "upload a file",
        fileOptions,
        undefined,
        (signal, watchdog) => driver.writeFile(target, watchdog ? watchdog.observe(stream) : stream, { signal, sizeBytes: info.size }),
        { method: "writeFile", detail: target },
      );
    },
    async download(sandboxPath, hostPath, fileOptions) {
      state.ensureOpen("download a file");
      requireString(hostPath, "hostPath");
      const source = path(sandboxPath);
      const maxBytes = requireLimit(fileOptions?.maxBytes, "options.maxBytes", backend);
      const limitBytes = maxBytes ?? DEFAULT_DOWNLOAD_LIMIT_BYTES;
      const tooLarge = downloadTooLarge(source, limitBytes, maxBytes === undefined);
      // A size the backend reports past the limit is refused before the host file is opened or touched (a sparse
      // file costs the sandbox nothing and the host its disk). The stream stays bounded too: a link, a file that grows.
      const reported = await runFileCall(state, "stat a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.stat(source, { signal }), {
        method: "stat",
        detail: source,
      }).then(
        (entry) => (entry.type === "file" ? entry.size : undefined),
        () => undefined,
      );
      if (reported !== undefined && reported > limitBytes) throw redactError(await tooLarge(reported), secretValues);
      const transfer = async (signal: AbortSignal, watchdog: IdleWatchdog | undefined) => {
        const opened = await driver.readFile(source, { signal });
        const stream = watchdog ? watchdog.observe(opened) : opened;
        try {
          await boundedDownload(stream, hostPath, { limitBytes, signal, tooLarge });
        } catch (error) {
          if (SbxError.isInstance(error)) throw error;
          if (signal.aborted) throw new AbortedError({ backend });
          throw error;
        }
      };
      await runFileCall(state, "download a file", fileOptions, undefined, transfer, { method: "readFile", detail: source }).catch(
        async (error: unknown) => {
          // The partial host file is removed on every failure, including a deadline that passed mid-transfer.
          await rm(hostPath, { force: true }).catch(() => {});
          throw error;
        },
      );
    },
  };
}
