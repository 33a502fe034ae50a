import { isSbxError, type PathError } from "@sbx/core";
import type { FileOperationError } from "deepagents";

/**
 * deepagents' error code for an sbx file error, or `undefined` when the error is not about the path (a closed
 * sandbox, a timeout, a backend failure): those are rethrown, since deepagents' four codes cannot say them and
 * reporting them as a path problem would be false.
 *
 * - `FileNotFoundError` → `file_not_found`
 * - `PathError` `is-a-directory` → `is_directory`
 * - `PathError` `escapes-workspace`, `read-only`, `permission-denied` → `permission_denied` (the path is refused by
 *   the sandbox's confinement or its permissions, not malformed)
 * - every other `PathError` reason (`invalid`, `not-a-directory`, `not-a-regular-file`, `exists`, `not-empty`) →
 *   `invalid_path`
 */
export function fileOperationError(error: unknown): FileOperationError | undefined {
  if (isSbxError(error, "SBX_FILE_NOT_FOUND")) return "file_not_found";
  if (!isSbxError(error, "SBX_PATH")) return undefined;
  switch ((error as PathError).reason) {
    case "is-a-directory":
      return "is_directory";
    case "escapes-workspace":
    case "read-only":
    case "permission-denied":
      return "permission_denied";
    default:
      return "invalid_path";
  }
}

/** Runs a file call and returns its value, or deepagents' code for a path error; any other error is rethrown. */
export async function withFileOperationError<Value>(
  work: () => Promise<Value>,
): Promise<{ value: Value; error: null } | { value: null; error: FileOperationError }> {
  try {
    return { value: await work(), error: null };
  } catch (error) {
    const code = fileOperationError(error);
    if (code === undefined) throw error;
    return { value: null, error: code };
  }
}

/** A one-line message for a path error, for results whose `error` is free text (ls, glob, grep). */
export function describeFileError(error: unknown): string | undefined {
  if (fileOperationError(error) === undefined) return undefined;
  return error instanceof Error ? error.message : String(error);
}
