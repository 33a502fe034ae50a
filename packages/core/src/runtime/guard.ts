import { AbortedError, ProviderError, SbxError } from "../errors/index.js";
import { redactError } from "./redaction.js";

export { redactError, redactText } from "./redaction.js";

/** Throws `AbortedError` if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, backend?: string): void {
  if (signal?.aborted) throw new AbortedError({ backend, cause: signal.reason });
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
    if (SbxError.isInstance(error)) throw redactError(error, secrets);
    throw redactError(
      new ProviderError({
        backend,
        cause: error,
        message: `The ${backend} backend failed during ${operation}: ${error instanceof Error ? error.message : String(error)}`,
      }),
      secrets,
    );
  }
}
