import { SbxError, type SbxErrorOptions } from "./sbx-error.js";

/**
 * The interpreter running the code is gone: its code context was killed (a cell that ignored the interrupt after a
 * timeout), the sandbox agent exited (killed from inside, out of memory), or the context was closed. The context's
 * state is lost; create a new context. A one-shot run (`contextId` null) may simply be retried (`retryable`).
 */
export class CodeInterpreterLostError extends SbxError {
  /** The lost context, or null for a one-shot run. */
  readonly contextId: string | null;
  /** What ended it, for example `"the sandbox agent exited (exit code 137)"`. */
  readonly reason: string;
  constructor(options: Omit<SbxErrorOptions, "message"> & { contextId: string | null; reason: string; message?: string }) {
    const next =
      options.contextId === null
        ? "Run the code again."
        : "Its variables are gone: create a new context with createCodeContext() and run the setup again.";
    super("SBX_INTERPRETER_LOST", {
      retryable: options.contextId === null,
      ...options,
      message:
        options.message ??
        `The Python interpreter ${options.contextId === null ? "running this code" : `of code context ${options.contextId}`} was lost: ${options.reason}. ${next}`,
    });
    this.name = "CodeInterpreterLostError";
    this.contextId = options.contextId;
    this.reason = options.reason;
  }
}

/**
 * The sandbox lacks a program sbx needs for this call, for example `python3` for `runCode()` and code contexts on
 * a backend that runs code through the sbx sandbox agent. Commands still work; use an image that has it.
 */
export class RuntimeMissingError extends SbxError {
  /** The missing program, for example `"python3"` (or `"python3 >= 3.8"` when the one found is too old). */
  readonly runtime: string;
  constructor(options: Omit<SbxErrorOptions, "message"> & { runtime: string; message?: string; detail?: string }) {
    super("SBX_RUNTIME_MISSING", {
      ...options,
      message:
        options.message ??
        `This sandbox has no ${options.runtime}${options.detail ? ` (${options.detail})` : ""}, which runCode() and code contexts need. Commands still work. Use an image that includes ${options.runtime} (for example python:3.12-slim).`,
    });
    this.name = "RuntimeMissingError";
    this.runtime = options.runtime;
  }
}
