import { CallbackError } from "../errors/index.js";

/**
 * Makes callbacks driven by sandbox output safe to call from a backend's stream handlers: a throw (from the
 * caller's `onStdout`/`onStderr`, or from sbx's own handling, such as a string grown past what the runtime allows)
 * never reaches the event loop. The first failure is kept as a `CallbackError`, later calls are ignored, and
 * `onFailure` is told once so the run can be stopped and the error become the call's outcome.
 */
export class CallbackGuard {
  /** The first failure, or undefined. */
  failure: CallbackError | undefined;

  constructor(
    private readonly backend: string,
    private readonly onFailure: () => void,
  ) {}

  /** Wraps `callback`; `name` is reported in the error (`"onStdout"`, `"onStderr"`, `"onOutput"`, or `"sbx"` for our own code). */
  wrap<Args extends unknown[]>(name: string, callback: (...args: Args) => void): (...args: Args) => void {
    return (...args: Args) => {
      if (this.failure) return;
      try {
        callback(...args);
      } catch (error) {
        if (this.failure) return;
        this.failure = error instanceof CallbackError ? error : new CallbackError({ backend: this.backend, callback: name, cause: error });
        try {
          this.onFailure();
        } catch {
          // Stopping must not throw into the backend's stream handler either.
        }
      }
    };
  }

  /** Throws the first failure, if any. */
  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}
