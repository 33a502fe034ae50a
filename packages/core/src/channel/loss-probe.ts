import { SandboxNotFoundError, type SbxError } from "../errors/index.js";
import { withinTime } from "../limits/deadline.js";
import { probeAnswerSchema, type ProbeAnswer, type SandboxDriverV1 } from "../v1/provider.js";

/** How long core waits for a driver's `probe()` after a failed call before it takes the answer as `"unknown"`: 5 s. */
export const PROBE_TIMEOUT_MS = 5_000;

/**
 * Error codes of a failure that might mean the sandbox is gone, so core asks the driver's `probe()` (ADR 0037): a
 * backend fault or an unknown error (`SBX_PROVIDER`, which core also makes of anything that is not an sbx error) and a
 * backend's own timeout (a dropped connection, a request that never came back). Every other code is a typed answer
 * from a sandbox that was there to give it (a missing file, a refused path, a refused capability).
 */
const AMBIGUOUS_CODES = new Set(["SBX_PROVIDER", "SBX_TIMEOUT"]);

/** True when `error` might mean the sandbox is gone (see `AMBIGUOUS_CODES`). */
export function isAmbiguousFailure(error: SbxError): boolean {
  return AMBIGUOUS_CODES.has(error.code);
}

/**
 * Asks the driver once whether the sandbox still exists, bounded by `PROBE_TIMEOUT_MS` (the probe's signal fires at
 * the bound). A probe that throws, times out or answers something else is `"unknown"`: a failed probe proves nothing.
 */
export async function askProbe(probe: NonNullable<SandboxDriverV1["probe"]>): Promise<ProbeAnswer> {
  const controller = new AbortController();
  try {
    const answer = await withinTime(probe({ signal: controller.signal }), PROBE_TIMEOUT_MS, () => new Error("the probe did not answer"));
    const parsed = probeAnswerSchema.safeParse(answer);
    return parsed.success ? parsed.data : "unknown";
  } catch {
    return "unknown";
  } finally {
    controller.abort();
  }
}

/** The lost-sandbox error core reports when `probe()` answered `"gone"` after `failure`. */
export function lostAfterProbe(failure: SbxError, context: { backend: string; sandboxId: string; operation: string }): SandboxNotFoundError {
  return new SandboxNotFoundError({
    backend: context.backend,
    sandboxId: context.sandboxId,
    cause: failure,
    message: `The ${context.backend} sandbox ${context.sandboxId} is gone (the backend says it no longer exists) while trying to ${context.operation}: ${failure.message} Create a new sandbox.`,
  });
}
