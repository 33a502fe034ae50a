import { AbortedError, TimeoutError } from "../errors/index.js";
import type { FileOperationOptions } from "../v1/sandbox.js";
import { Deadline, IdleWatchdog } from "../limits/deadline.js";
import { DEFAULT_FILE_TIMEOUT_MS, requireLimit } from "../limits/file-limits.js";
import { throwIfAborted } from "../security/guard.js";
import { redactError } from "../security/redaction.js";
import type { LoggedMethod } from "../channel/driver-channel.js";
import type { SandboxState } from "./sandbox-state.js";

/**
 * Runs one file operation under a deadline (the caller's `timeoutMs`, else `defaultTimeoutMs`) and the caller's
 * signal. The driver gets a signal that fires on either; the call settles as soon as the deadline passes, with
 * `TimeoutError` (`killed: false`: the backend may still finish the operation) or `AbortedError`, even if the
 * backend never answers. Without any total deadline (`defaultTimeoutMs` undefined and none given), a transfer is
 * still bounded: it fails once it makes no progress through `watchdog` for `DEFAULT_FILE_TIMEOUT_MS`. `logged`
 * names the driver method and path for the debug log.
 */
export async function runFileCall<Result>(
  state: SandboxState,
  operation: string,
  fileOptions: FileOperationOptions | undefined,
  defaultTimeoutMs: number | undefined,
  work: (signal: AbortSignal, watchdog: IdleWatchdog | undefined) => Promise<Result>,
  logged?: { readonly method: LoggedMethod; readonly detail: string },
): Promise<Result> {
  const { backend } = state;
  const callerTimeoutMs = requireLimit(fileOptions?.timeoutMs, "options.timeoutMs", backend);
  const timeoutMs = callerTimeoutMs ?? defaultTimeoutMs;
  throwIfAborted(fileOptions?.signal, backend);
  const deadline = new Deadline({ timeoutMs, signal: fileOptions?.signal });
  const watchdog = timeoutMs === undefined ? new IdleWatchdog(DEFAULT_FILE_TIMEOUT_MS) : undefined;
  const controller = new AbortController();
  deadline.onStop(() => controller.abort());
  try {
    const working = state.call(operation, () => work(controller.signal, watchdog), { ...logged, signal: controller.signal });
    working.catch(() => {});
    const outcome = await Promise.race([
      working.then((value) => ({ ended: "done", value }) as const),
      deadline.stopped.then(() => ({ ended: "stopped" }) as const),
      ...(watchdog ? [watchdog.stalled.then(() => ({ ended: "stalled" }) as const)] : []),
    ]);
    if (outcome.ended === "done") return outcome.value;
    if (outcome.ended === "stalled") {
      controller.abort();
      throw new TimeoutError({
        backend,
        timeoutMs: DEFAULT_FILE_TIMEOUT_MS,
        killed: false,
        message: `The ${backend} backend made no progress (${operation}) for ${DEFAULT_FILE_TIMEOUT_MS} ms; sbx stopped waiting (the backend may still complete it). Pass { timeoutMs } to bound the whole transfer instead.`,
      });
    }
    if (deadline.reason === "abort")
      throw new AbortedError({ backend, cause: fileOptions?.signal?.reason, message: `The caller aborted: ${operation}.` });
    throw new TimeoutError({
      backend,
      timeoutMs: timeoutMs ?? 0,
      killed: false,
      message: `The ${backend} backend did not finish (${operation}) within ${timeoutMs} ms; sbx stopped waiting (the backend may still complete it). Pass a larger { timeoutMs } for slow operations.`,
    });
  } catch (error) {
    throw redactError(error, state.secretValues);
  } finally {
    deadline.dispose();
    watchdog?.dispose();
  }
}
