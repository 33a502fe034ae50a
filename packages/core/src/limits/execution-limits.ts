import type { CodeRequest, DriverExecution } from "../v1/provider.js";
import type { ExecutionError, ExecutionResult } from "../v1/sandbox.js";

/** Default most rich results kept per `runCode` call. */
export const DEFAULT_MAX_RESULTS = 100;

/** The caps on a run's rich results: how many (`maxResults`), and how many UTF-8 bytes of data in all (`limitBytes`). */
export type ResultCaps = NonNullable<CodeRequest["resultCaps"]>;

/**
 * The one rule capping rich results, applied as they arrive: results are kept in order while both the count and the
 * total size of their data stay within the caps; from the first that does not fit on, every result is dropped and
 * counted, so memory stays bounded however many the code produces, and a dropped result is never a silent one.
 */
export class ResultCollector {
  private readonly kept: ExecutionResult[] = [];
  private keptBytes = 0;
  private droppedCount = 0;

  constructor(private readonly caps: ResultCaps) {}

  /** Keeps `result`, or drops and counts it (and every later one) once a cap is reached. */
  push(result: ExecutionResult): void {
    if (this.droppedCount === 0 && this.kept.length < this.caps.maxResults) {
      let size = 0;
      for (const value of Object.values(result.data ?? {})) size += typeof value === "string" ? Buffer.byteLength(value, "utf8") : 0;
      if (this.keptBytes + size <= this.caps.limitBytes) {
        this.keptBytes += size;
        this.kept.push(result);
        return;
      }
    }
    this.droppedCount++;
  }

  /** The kept results, in order. */
  get results(): ExecutionResult[] {
    return this.kept;
  }

  /** How many results were dropped. */
  get dropped(): number {
    return this.droppedCount;
  }
}

/** Applies `ResultCollector`'s rule to a finished run's results: the kept ones, and whether any was dropped. */
export function capResults(results: readonly ExecutionResult[], caps: ResultCaps): { results: ExecutionResult[]; truncated: boolean } {
  const collector = new ResultCollector(caps);
  for (const result of results) collector.push(result);
  return { results: collector.results, truncated: collector.dropped > 0 };
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
