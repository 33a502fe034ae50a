import type { CredentialEndReason, CredentialEvent, CredentialSource } from "../v1/credentials.js";
import { redactError, redactText } from "../security/guard.js";

/** What one revocation needs. */
export interface RevocationTarget {
  readonly source: CredentialSource;
  readonly name: string;
  readonly sandboxId: string;
  readonly value: string | null;
  readonly handle: string | null;
  readonly reason: CredentialEndReason;
  /** Values to redact from errors and events (the credential's own and the sandbox's other secrets). */
  readonly secretValues: readonly string[];
}

/** How a revocation ended. */
export interface RevocationOutcome {
  readonly revoked: boolean;
  readonly attempts: number;
  /** The last failure's message, redacted, or null. */
  readonly error: string | null;
}

function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Calls the source's `onEvent`; a listener that throws is reported as a warning, never into the caller. */
export function emitCredentialEvent(source: CredentialSource, event: CredentialEvent): void {
  if (!source.onEvent) return;
  try {
    source.onEvent(event);
  } catch (error) {
    process.emitWarning(`sbx: a credential onEvent listener (source ${source.id}) threw: ${error instanceof Error ? error.message : String(error)}`, {
      code: "SBX_CREDENTIAL_EVENT_LISTENER",
    });
  }
}

/** Runs `work` with a deadline, turning a hang into a rejection. */
async function withDeadline<Result>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<Result> | Result,
): Promise<Result> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onOuterAbort = () => {};
  // Settles at the deadline or when the caller aborts, even if `work` ignores its signal.
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`did not finish within ${timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
    onOuterAbort = () => {
      const error = new Error("aborted by the caller");
      controller.abort(outer?.reason ?? error);
      reject(error);
    };
    if (outer?.aborted) onOuterAbort();
  });
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  try {
    return await Promise.race([Promise.resolve().then(() => work(controller.signal)), deadline]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  }
}

/** Exported for issue, which uses the same deadline rule. */
export { withDeadline };

/**
 * Calls the source's `revoke` up to `revokeAttempts` times, each under `timeoutMs`, waiting `retryDelayMs` (doubled
 * each time) between attempts. Emits `revoke-attempt-failed` for each failure but the last, then `revoked` or
 * `revoke-failed`. Never throws.
 */
export async function revokeWithRetries(target: RevocationTarget, signal?: AbortSignal): Promise<RevocationOutcome> {
  const { source } = target;
  let lastError: Error | null = null;
  for (let attempt = 1; attempt <= source.revokeAttempts; attempt++) {
    try {
      await withDeadline(source.timeoutMs, signal, (attemptSignal) =>
        source.revoke({
          sandboxId: target.sandboxId,
          name: target.name,
          value: target.value,
          handle: target.handle,
          reason: target.reason,
          signal: attemptSignal,
        }),
      );
      emitCredentialEvent(source, {
        type: "revoked",
        sourceId: source.id,
        name: target.name,
        sandboxId: target.sandboxId,
        reason: target.reason,
        attempt,
        error: null,
      });
      return { revoked: true, attempts: attempt, error: null };
    } catch (error) {
      lastError = redactError(error instanceof Error ? error : new Error(String(error)), target.secretValues);
      const final = attempt === source.revokeAttempts || signal?.aborted === true;
      emitCredentialEvent(source, {
        type: final ? "revoke-failed" : "revoke-attempt-failed",
        sourceId: source.id,
        name: target.name,
        sandboxId: target.sandboxId,
        reason: target.reason,
        attempt,
        error: lastError,
      });
      if (final) {
        if (!source.onEvent) {
          process.emitWarning(
            `sbx: revoking credential ${target.name} (source ${source.id}) of sandbox ${target.sandboxId} failed after ${attempt} attempts: ${lastError.message}. The record was kept; revokeOrphanedCredentials() retries it.`,
            { code: "SBX_CREDENTIAL_REVOCATION" },
          );
        }
        return { revoked: false, attempts: attempt, error: redactText(lastError.message, target.secretValues) };
      }
      await sleep(source.retryDelayMs * 2 ** (attempt - 1), signal);
    }
  }
  return { revoked: false, attempts: source.revokeAttempts, error: lastError ? lastError.message : "not attempted" };
}
