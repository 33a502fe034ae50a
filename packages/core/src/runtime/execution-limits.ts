import type { DriverExecution } from "../v1/provider.js";
import type { ExecutionError, ExecutionResult } from "../v1/sandbox.js";

/** Default most rich results kept per `runCode` call. */
export const DEFAULT_MAX_RESULTS = 100;

/**
 * Keeps rich results in order while both the count (`maxResults`) and the total size of their data (UTF-8 bytes of
 * every MIME value, `limitBytes`) stay within the caps; the rest are dropped and `truncated` is set.
 */
export function capResults(
  results: readonly ExecutionResult[],
  caps: { maxResults: number; limitBytes: number },
): { results: ExecutionResult[]; truncated: boolean } {
  const kept: ExecutionResult[] = [];
  let bytes = 0;
  for (const result of results) {
    if (kept.length >= caps.maxResults) return { results: kept, truncated: true };
    let size = 0;
    for (const value of Object.values(result.data ?? {})) size += typeof value === "string" ? Buffer.byteLength(value, "utf8") : 0;
    if (bytes + size > caps.limitBytes) return { results: kept, truncated: true };
    bytes += size;
    kept.push(result);
  }
  return { results: kept, truncated: false };
}

/**
 * The error of a run that ended without raising an exception but did not end normally: killed by the out-of-memory
 * killer, or by a signal. Null for a normal end. So an OOM-killed run can never be mistaken for a success.
 */
export function describeCodeExit(outcome: DriverExecution, limits: { memoryMiB?: number }): ExecutionError | null {
  if (outcome.outOfMemoryKilled === true) {
    const limit = limits.memoryMiB !== undefined ? ` (limits.memoryMiB: ${limits.memoryMiB})` : "";
    return {
      name: "OutOfMemoryError",
      value: `The code was killed by the out-of-memory killer: the sandbox ran out of memory${limit}. Raise limits.memoryMiB or use less memory.`,
      traceback: "",
    };
  }
  const exitCode = outcome.exitCode;
  if (typeof exitCode === "number" && exitCode > 128 && exitCode < 160) {
    return {
      name: "KilledError",
      value: `The interpreter was killed by signal ${exitCode - 128} without raising an exception (exit code ${exitCode}).`,
      traceback: "",
    };
  }
  return null;
}
