import { AbortedError, ProviderError, SbxError } from "../errors/index.js";
import { redactError } from "./redaction.js";

export { redactError, redactText } from "./redaction.js";

/** Throws `AbortedError` if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, backend?: string): void {
  if (signal?.aborted) throw new AbortedError({ backend, cause: signal.reason });
}

/**
 * What a failed adapter call reports: an sbx error as it is, anything else as `ProviderError` with the original as
 * `cause`; secret values removed from the message either way.
 */
export function adapterFailure(error: unknown, backend: string, operation: string, secrets: readonly string[]): SbxError {
  if (SbxError.isInstance(error)) return redactError(error, secrets);
  return redactError(
    new ProviderError({
      backend,
      cause: error,
      message: `The ${backend} backend failed during ${operation}: ${error instanceof Error ? error.message : String(error)}`,
    }),
    secrets,
  );
}

/**
 * Calls into an adapter and makes sure only sbx errors escape: anything else becomes `ProviderError`
 * with the original as `cause`. Secret values are removed from messages.
 */
export async function callAdapter<Result>(
  backend: string,
  operation: string,
  secrets: readonly string[],
  call: () => Promise<Result>,
): Promise<Result> {
  try {
    return await call();
  } catch (error) {
    throw adapterFailure(error, backend, operation, secrets);
  }
}
