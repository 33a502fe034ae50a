/**
 * Deadlines and bounded waits, all promise-based (no polling). A deadline is started before the first backend
 * call, so a backend that stalls while starting work still times out, and every wait after a stop is bounded by a
 * grace period, so a backend that stops answering cannot hang the caller.
 */

/** Why work was told to stop. `"callback"`: a callback driven by its output threw. */
export type StopReason = "timeout" | "abort" | "callback";

/** Default time a backend gets, after work is told to stop, to confirm the kill and report the exit. */
export const DEFAULT_KILL_GRACE_MS = 10_000;

/**
 * A timer that resolves after `milliseconds`; `cancel()` clears it (the promise then never settles).
 */
export function cancellableDelay(milliseconds: number): { promise: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, milliseconds);
  });
  return {
    promise,
    cancel() {
      if (timer) clearTimeout(timer);
    },
  };
}

/**
 * The stop signal of one call: a timeout (started at construction, before any backend call), the caller's
 * `AbortSignal`, or an explicit `stop()`. `stopped` resolves once, with the first reason.
 */
export class Deadline {
  /** The first reason work was told to stop, or undefined while it may run. */
  reason: StopReason | undefined;
  /** Resolves with the reason when work is told to stop; never rejects. */
  readonly stopped: Promise<StopReason>;
  private resolveStopped!: (reason: StopReason) => void;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.stop("abort");
  private readonly listeners: Array<(reason: StopReason) => void> = [];

  constructor(private readonly options: { timeoutMs?: number; signal?: AbortSignal }) {
    this.stopped = new Promise<StopReason>((resolve) => (this.resolveStopped = resolve));
    if (options.timeoutMs !== undefined) this.timer = setTimeout(() => this.stop("timeout"), options.timeoutMs);
    options.signal?.addEventListener("abort", this.onAbort, { once: true });
    if (options.signal?.aborted) this.stop("abort");
  }

  /** Tells the work to stop (first reason wins). */
  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    this.resolveStopped(reason);
    for (const listener of this.listeners.splice(0)) listener(reason);
  }

  /** Calls `listener` once when work is told to stop (at once, synchronously, if it already was). */
  onStop(listener: (reason: StopReason) => void): void {
    if (this.reason) listener(this.reason);
    else this.listeners.push(listener);
  }

  /** Clears the timer and the abort listener. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.options.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** How a bounded wait ended. */
export type Settled<Value> = { readonly settled: true; readonly value: Value } | { readonly settled: false };

/**
 * Waits for `work`. Once `stopped` resolves, waits at most `graceMs` more and then gives up with
 * `{ settled: false }`, so a backend that loses track of stopped work cannot hang the caller. Rejections of `work`
 * propagate.
 */
export async function settleWithinGrace<Value>(work: Promise<Value>, stopped: Promise<unknown>, graceMs: number): Promise<Settled<Value>> {
  let grace: ReturnType<typeof cancellableDelay> | undefined;
  let finished = false;
  const givenUp = stopped.then(async () => {
    if (finished) return { settled: false } as const;
    grace = cancellableDelay(graceMs);
    await grace.promise;
    return { settled: false } as const;
  });
  try {
    return await Promise.race([work.then((value) => ({ settled: true, value }) as const), givenUp]);
  } finally {
    finished = true;
    grace?.cancel();
  }
}

/** How a kill request ended. */
export type KillOutcome =
  | { readonly verified: true }
  | { readonly verified: false; readonly detail: string; /** The driver's rejection, when it rejected. */ readonly error?: unknown };

/**
 * Calls a driver's `kill()` (which resolves only once the driver verified the process and its descendants are gone)
 * and waits at most `graceMs` for it. Never rejects.
 */
export async function killWithinGrace(kill: () => Promise<void>, graceMs: number): Promise<KillOutcome> {
  let attempt: Promise<void>;
  try {
    attempt = Promise.resolve(kill());
  } catch (error) {
    attempt = Promise.reject(error);
  }
  const grace = cancellableDelay(graceMs);
  try {
    return await Promise.race([
      attempt.then(
        () => ({ verified: true }) as const,
        (error: unknown) =>
          ({
            verified: false,
            error,
            detail: `the backend could not verify the kill: ${error instanceof Error ? error.message : String(error)}`,
          }) as const,
      ),
      grace.promise.then(() => ({ verified: false, detail: `the backend did not confirm the kill within ${graceMs} ms` }) as const),
    ]);
  } finally {
    grace.cancel();
  }
}

/**
 * The one bounded wait (core, adapters and the contract suite use it instead of a `Promise.race` with a timer of their
 * own): waits for `work` at most `timeoutMs` (no limit when undefined) and then settles with `onTimeout()`: rejects
 * with it when it is an `Error`, resolves with it otherwise (a marker such as `"timed-out"` or `undefined`, for a
 * caller that goes on). Rejections of `work` propagate. The timer is cleared as soon as either side settles; the work
 * itself is not cancelled here (pass it an `AbortSignal` for that), and its later rejection is handled.
 * @example const running = await withinTime(container.inspect(), 5_000, () => undefined);
 * @example await withinTime(driver.stat(path, {}), 5_000, () => new Error("stat did not answer"));
 */
export async function withinTime<Value, Fallback = never>(
  work: Promise<Value>,
  timeoutMs: number | undefined,
  onTimeout: () => Fallback,
): Promise<Value | Exclude<Fallback, Error>> {
  if (timeoutMs === undefined) return work;
  const limit = cancellableDelay(timeoutMs);
  try {
    return await Promise.race([
      work,
      limit.promise.then(() => {
        const fallback = onTimeout();
        if (fallback instanceof Error) throw fallback;
        return fallback as Exclude<Fallback, Error>;
      }),
    ]);
  } finally {
    limit.cancel();
    work.catch(() => {});
  }
}

/**
 * A stall detector for transfers whose total length sbx cannot bound in time (uploads, writes from a stream,
 * downloads): `stalled` resolves once `idleMs` pass without progress. Progress is a chunk passing through a stream
 * given to `observe()`; the timer starts at construction, so a backend that never starts pulling also stalls.
 */
export class IdleWatchdog {
  /** Resolves when the transfer made no progress for `idleMs`; never rejects. */
  readonly stalled: Promise<void>;
  private fire!: () => void;
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(readonly idleMs: number) {
    this.stalled = new Promise<void>((resolve) => (this.fire = resolve));
    this.touch();
  }

  /** Records progress: the stall timer starts again. */
  touch(): void {
    if (this.disposed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.fire, this.idleMs);
  }

  /** Passes `stream` through unchanged, recording progress on every chunk. */
  observe(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    return stream.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          this.touch();
          controller.enqueue(chunk);
        },
      }),
    );
  }

  /** Stops the timer. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
