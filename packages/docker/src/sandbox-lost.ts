import { SbxError, type SandboxNotFoundError } from "@sbx/core";
import type Docker from "dockerode";
import { engineFailure, isContainerGoneError, sandboxLost, statusCodeOf } from "./map-docker-error.js";

/** What one look at the engine says of a sandbox: its container runs, is gone (removed or stopped), or the engine did not answer. */
export type SandboxProbeAnswer = "running" | "gone" | "unknown";

/** How long one probe waits for the engine (it can hold a container's lock for long: an exec into a paused container never starts). */
const PROBE_TIMEOUT_MS = 5000;

/**
 * Asks the engine once (one container inspect, bounded by 5 s and `signal`) whether the container still runs:
 * `"gone"` for 404 or a container that is not running, `"unknown"` when the engine did not answer (unreachable, slow,
 * or any other error). Never throws.
 */
export async function probeContainer(container: Docker.Container, options: { readonly signal?: AbortSignal } = {}): Promise<SandboxProbeAnswer> {
  if (options.signal?.aborted) return "unknown";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const unanswered = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), PROBE_TIMEOUT_MS);
      onAbort = () => resolve(undefined);
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
    const inspect = await Promise.race([container.inspect(), unanswered]);
    if (!inspect) return "unknown";
    return inspect.State.Running === true ? "running" : "gone";
  } catch (error) {
    return statusCodeOf(error) === 404 ? "gone" : "unknown";
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * One sandbox's lost state (a Docker driver's): once its container is known gone, every operation raises the same
 * `SandboxNotFoundError`. An engine answer that names the container gone (404 "no such container", 409 "is not
 * running") is mapped at once, with no further engine call; only an ambiguous failure asks the engine (`probe`).
 */
export class SandboxLoss {
  private lost: SandboxNotFoundError | undefined;
  /** Why sbx is ending the container, once it is: a loss seen while it does says so (adr/0036). */
  private endedBySbx: string | undefined;

  /**
   * @param options.container the sandbox's container.
   * @param options.isDestroyed true once sbx removed the container itself (its failures are then not a loss).
   */
  constructor(private readonly options: { readonly container: Docker.Container; readonly isDestroyed: () => boolean }) {}

  /** The lost-sandbox error once the container is known gone, else undefined. */
  get error(): SandboxNotFoundError | undefined {
    return this.lost;
  }

  /** Records the container as gone (the first detail wins) and returns the error every operation raises from now on. */
  markLost(detail: string, cause?: unknown): SandboxNotFoundError {
    this.lost ??= sandboxLost(this.options.container.id, this.endedBySbx ?? detail, cause);
    return this.lost;
  }

  /** Records that sbx itself is ending the container and why, before it does: every loss recorded from now on names that reason. */
  noteEndedBySbx(detail: string): void {
    this.endedBySbx ??= detail;
  }

  /** One bounded look at the engine (see `probeContainer`); `"gone"` once the container is known lost. */
  probe(options: { readonly signal?: AbortSignal } = {}): Promise<SandboxProbeAnswer> {
    if (this.lost) return Promise.resolve("gone");
    return probeContainer(this.options.container, options);
  }

  /** The lost-sandbox error when `cause` (or the engine, asked now) says the container is gone; else undefined. */
  async lostError(cause?: unknown): Promise<Error | undefined> {
    if (this.lost) return this.lost;
    if (cause !== undefined && isContainerGoneError(cause)) return this.markLost("the engine no longer has it running", cause);
    if (this.options.isDestroyed()) return undefined;
    const answer = await this.probe();
    return answer === "gone" ? this.markLost("its container ended (removed out of band, or its lifetime ran out)", cause) : undefined;
  }

  /**
   * The error an operation that failed with `error` raises: the lost-sandbox error when the engine said the
   * container is gone; otherwise the error itself, an untyped one as `ProviderError`. An ambiguous failure (an engine
   * or transport error) is left to core's call channel, which asks `probe()` once (ADR 0037).
   */
  async failure(error: unknown): Promise<Error> {
    if (SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND") return error;
    if (isContainerGoneError(error)) return this.markLost("the engine no longer has it running", error);
    return engineFailure(error);
  }
}
