import { AbortedError, TimeoutError, type SbxError } from "../errors/index.js";
import { CallbackGuard } from "./callback-guard.js";
import { Deadline, settleWithinGrace, type Settled, type StopReason } from "./deadline.js";
import { redactText } from "../security/redaction.js";

/** Whether stopped work was verifiably ended, and the sentence that says so. */
export interface StopReport {
  /** True only when the backend verified the work and everything it started are gone. */
  readonly killed: boolean;
  /** One or two sentences for the error message. */
  readonly detail: string;
}

/** A stop the backend verified. */
export function verifiedStop(detail: string): StopReport {
  return { killed: true, detail };
}

/** A stop sbx could not verify: `what` (for example "the command was killed") and why not. */
export function unverifiedStop(what: string, reasons: readonly string[]): StopReport {
  return {
    killed: false,
    detail: `sbx could not verify that ${what}: ${reasons.join("; ")}. Processes may survive in the sandbox; kill the sandbox to be sure.`,
  };
}

/** How a run's errors name it. */
const WORDING = {
  command: { aborted: "The command", timedOut: "The command" },
  code: { aborted: "The code run", timedOut: "The code" },
} as const;

/** What `RunDeadline` needs. */
export interface RunDeadlineOptions {
  /** The backend's name, for errors. */
  readonly backend: string;
  /** What runs: a shell command or code. */
  readonly kind: keyof typeof WORDING;
  /** The caller's time limit; none when undefined. */
  readonly timeoutMs: number | undefined;
  /** The caller's signal. */
  readonly signal: AbortSignal | undefined;
  /** How long, after a stop, the backend gets to confirm it (see `SandboxContext.killGraceMs`). */
  readonly killGraceMs: number;
  /** Secret values, redacted from the partial output a `TimeoutError` carries. */
  readonly secretValues: readonly string[];
}

/**
 * The one deadline and cancellation rule of commands and code runs. It starts at construction, before the first
 * backend call, so a backend that stalls while starting still times out. Work stops on the first of: the timeout,
 * the caller's abort, or a throwing output callback (`guard`). On a stop, `signal` fires and `onStop` listeners run
 * (they kill the work); every wait after it is bounded by the kill grace (`settle`), and `stoppedError` is the
 * error the call then ends with.
 */
export class RunDeadline {
  /** Guards output callbacks: a throw stops the run and becomes its error. */
  readonly guard: CallbackGuard;
  private readonly deadline: Deadline;
  private readonly controller = new AbortController();

  constructor(private readonly options: RunDeadlineOptions) {
    this.deadline = new Deadline({ timeoutMs: options.timeoutMs, signal: options.signal });
    this.deadline.onStop(() => this.controller.abort());
    this.guard = new CallbackGuard(options.backend, () => this.deadline.stop("callback"));
  }

  /** Why the run was told to stop, or undefined while it may run. */
  get reason(): StopReason | undefined {
    return this.deadline.reason;
  }

  /** Resolves when the run is told to stop; never rejects. */
  get stopped(): Promise<StopReason> {
    return this.deadline.stopped;
  }

  /** Fires when the run is told to stop: hand it to a backend that stops work on abort. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Calls `listener` once when the run is told to stop (at once if it already was). */
  onStop(listener: (reason: StopReason) => void): void {
    this.deadline.onStop(listener);
  }

  /** Waits for `work`; after a stop at most the kill grace more, then `{ settled: false }`. Rejections propagate. */
  settle<Value>(work: Promise<Value>): Promise<Settled<Value>> {
    return settleWithinGrace(work, this.deadline.stopped, this.options.killGraceMs);
  }

  /**
   * The error a stopped run ends with: the callback's `CallbackError`, `AbortedError`, or `TimeoutError` carrying
   * the partial output (redacted) and whether the kill was verified.
   */
  stoppedError(report: StopReport, partialOutput: { readonly stdout: string; readonly stderr: string }): SbxError {
    const { backend, kind, timeoutMs, signal, secretValues } = this.options;
    if (this.deadline.reason === "callback" && this.guard.failure) return this.guard.failure;
    if (this.deadline.reason === "abort")
      return new AbortedError({ backend, cause: signal?.reason, message: `${WORDING[kind].aborted} was aborted by the caller. ${report.detail}` });
    return new TimeoutError({
      backend,
      timeoutMs: timeoutMs ?? 0,
      killed: report.killed,
      partialStdout: redactText(partialOutput.stdout, secretValues),
      partialStderr: redactText(partialOutput.stderr, secretValues),
      message: `${WORDING[kind].timedOut} ran past its ${timeoutMs} ms timeout. ${report.detail}`,
    });
  }

  /** Clears the timer and the abort listener. */
  dispose(): void {
    this.deadline.dispose();
  }
}
