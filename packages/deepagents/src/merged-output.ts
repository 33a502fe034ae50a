import { isSbxError, type Sandbox, type TimeoutError } from "@sbx/core";
import type { ExecuteResponse } from "deepagents";

/** Limits of one `execute()` call. */
export interface MergedCommandLimits {
  /** Kill the command (and everything it started) after this many milliseconds. */
  timeoutMs: number;
  /** Bytes of combined output kept; the rest is dropped and `truncated` is set. */
  outputLimitBytes: number;
}

/**
 * The command with its standard error joined to its standard output by the sandbox's own shell: `exec 2>&1` runs
 * first, so every later write to either stream goes down one pipe in the order the process made it. sbx core does this
 * itself for `commands.run(command, { combinedOutput: true })` (ADR 0045), which `execute` uses; kept for callers who
 * build command lines for other tools.
 */
export function mergedCommand(command: string): string {
  return `exec 2>&1\n${command}`;
}

/**
 * Runs `command` with stdout and stderr combined in order, as deepagents' `execute` expects. A non-zero exit code is
 * a result. A command that runs past `timeoutMs` is killed and reported with `exitCode: null` and a last line that
 * says so, after the output it wrote until then; every other error (the sandbox closed, the backend failed) is thrown.
 */
export async function runMerged(sandbox: Sandbox, command: string, limits: MergedCommandLimits): Promise<ExecuteResponse> {
  try {
    // sbx merges the streams inside the sandbox (ADR 0045): `output` is in the order the process wrote.
    const result = await sandbox.commands.run(command, {
      timeoutMs: limits.timeoutMs,
      outputLimitBytes: limits.outputLimitBytes,
      combinedOutput: true,
    });
    const output = result.output ?? `${result.stdout}${result.stderr}`;
    return { output, exitCode: result.exitCode, truncated: result.truncated.stdout || result.truncated.stderr };
  } catch (error) {
    if (!isSbxError(error, "SBX_TIMEOUT")) throw error;
    const timeout = error as TimeoutError;
    const killed = timeout.killed ? "was killed" : "was told to stop (the kill was not confirmed)";
    const note = `[sbx: the command ran past ${timeout.timeoutMs} ms and ${killed}; the output above is what it wrote until then]`;
    const partial = `${timeout.partialStdout}${timeout.partialStderr}`;
    return { output: partial === "" || partial.endsWith("\n") ? `${partial}${note}` : `${partial}\n${note}`, exitCode: null, truncated: false };
  }
}
