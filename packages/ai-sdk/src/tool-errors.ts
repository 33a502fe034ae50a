import { isSbxError } from "@sbx/core";

/** What a tool returns to the model instead of throwing, when the sandbox refuses or fails. */
export interface ToolErrorOutput {
  readonly error: {
    /** Stable sbx error code, for example `"SBX_FILE_NOT_FOUND"`. */
    readonly code: string;
    /** What happened. */
    readonly message: string;
    /** Whether calling again may succeed. */
    readonly retryable: boolean;
  };
}

/**
 * Runs a tool body; typed sbx errors become an `{ error }` output the model can read and act on (a missing file, a
 * timeout), and the loop continues. Anything else is a bug and is rethrown for the AI SDK to report.
 */
export async function returningSbxErrors<Output>(body: () => Promise<Output>): Promise<Output | ToolErrorOutput> {
  try {
    return await body();
  } catch (error) {
    if (isSbxError(error)) return { error: { code: error.code, message: error.message, retryable: error.retryable } };
    throw error;
  }
}
