import { InvalidArgumentError, SandboxClosedError } from "../errors/index.js";
import { DEFAULT_FILE_TIMEOUT_MS } from "../limits/file-limits.js";
import { DEFAULT_MAX_BUFFERED_WATCH_EVENTS, WatchEventQueue } from "../limits/watch-event-queue.js";
import { fileWatchOptionsSchema } from "../v1/options.js";
import type { DriverFileWatch } from "../v1/provider.js";
import type { FileWatcher, FileWatchEvent, FileWatchOptions } from "../v1/sandbox.js";
import { redactError } from "../security/redaction.js";
import { validate } from "../security/validate.js";
import { runFileCall } from "./file-call.js";
import type { SandboxState } from "./sandbox-state.js";

/**
 * `files.watch()` (ADR 0049): checks `FILE_WATCH`, confines the path, establishes the driver's watch under the file
 * deadline, and hands events to the caller through a bounded queue (coalesced writes, dropped events replaced by one
 * `"overflow"` marker). The watch ends with the sandbox: its kill ends iteration with `SandboxClosedError`.
 */
export async function watchFiles(state: SandboxState, given: string, rawOptions: FileWatchOptions | undefined): Promise<FileWatcher> {
  state.ensureOpen("watch files");
  state.requireCapability("FILE_WATCH");
  const target = state.workspacePath(given);
  const options = validate(fileWatchOptionsSchema, rawOptions ?? {}, "options");
  const { driver, backend } = state;
  const watchFilesMethod = driver.watchFiles;
  if (!watchFilesMethod) {
    // The manifest says FILE_WATCH and the method check (ADR 0035) holds it to a method: unreachable in practice.
    state.requireCapability("FILE_WATCH", "the driver has no watchFiles method");
  }
  const queue = new WatchEventQueue(target, options.maxBufferedEvents ?? DEFAULT_MAX_BUFFERED_WATCH_EVENTS);
  const redact = (error: Error): Error => {
    const redacted = redactError(error, state.secretValues);
    return redacted instanceof Error ? redacted : error;
  };
  const established: DriverFileWatch = await runFileCall(
    state,
    "watch files",
    { timeoutMs: options.timeoutMs, signal: options.signal },
    DEFAULT_FILE_TIMEOUT_MS,
    (signal) =>
      watchFilesMethod!({
        path: target,
        recursive: options.recursive ?? false,
        signal,
        onEvent: (event: FileWatchEvent) => queue.push(event),
        onEnd: (error: Error) => queue.finish(redact(error)),
      }),
  );
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      queue.finish();
      state.liveWatches.delete(stop);
      options.signal?.removeEventListener("abort", onAbort);
      await established.stop().catch(() => {});
    })();
    return stopping;
  };
  const onAbort = () => void stop();
  // The sandbox's kill ends the watch here; a lost sandbox ends it through the driver's `onEnd`.
  state.liveWatches.set(stop, () => {
    queue.finish(new SandboxClosedError({ sandboxId: driver.id, operation: "watch files", backend }));
    void established.stop().catch(() => {});
  });
  if (options.signal?.aborted) void stop();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  let iterated = false;
  return {
    path: target,
    stop,
    [Symbol.asyncDispose]: stop,
    [Symbol.asyncIterator]() {
      if (iterated) throw new InvalidArgumentError({ field: "watcher", backend, message: "A file watcher has one consumer: iterate it once." });
      iterated = true;
      return {
        next: () => queue.next(),
        return: async () => {
          await stop();
          return { value: undefined, done: true };
        },
      };
    },
  };
}
