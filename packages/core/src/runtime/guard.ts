import { AbortedError, ProviderError, SbxError } from "../errors/index.js";

/** Throws `AbortedError` if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, backend?: string): void {
  if (signal?.aborted) throw new AbortedError({ backend, cause: signal.reason });
}

/** Replaces every secret value in a text with `[redacted]`. */
export function redactText(text: string, secrets: readonly string[]): string {
  let result = text;
  // Longest first, so a secret that contains another is not left half-visible ("[redacted]def").
  for (const secret of [...secrets].sort((left, right) => right.length - left.length)) {
    if (secret.length === 0) continue;
    result = result.split(secret).join("[redacted]");
  }
  return result;
}

/** Removes secret values from an error's message and from its causes' messages, in place. */
export function redactError<ErrorType>(error: ErrorType, secrets: readonly string[]): ErrorType {
  if (secrets.length === 0) return error;
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    try {
      current.message = redactText(current.message, secrets);
      if (typeof current.stack === "string") current.stack = redactText(current.stack, secrets);
    } catch {
      // A frozen foreign error: leave it; it is only kept as a cause.
    }
    current = (current as { cause?: unknown }).cause;
  }
  return error;
}

/**
 * Calls into an adapter and makes sure only sbx errors escape: anything else becomes `ProviderError`
 * with the original as `cause`. Secret values are removed from messages.
 */
export async function callAdapter<Result>(backend: string, operation: string, secrets: readonly string[], call: () => Promise<Result>): Promise<Result> {
  try {
    return await call();
  } catch (error) {
    if (SbxError.isInstance(error)) throw redactError(error, secrets);
    throw redactError(
      new ProviderError({ backend, cause: error, message: `The ${backend} backend failed during ${operation}: ${error instanceof Error ? error.message : String(error)}` }),
      secrets,
    );
  }
}
