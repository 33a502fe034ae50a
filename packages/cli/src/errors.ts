import { isSbxError, type SbxErrorCode } from "@sbx/core";
import type { CliEnvironment, OutputMode } from "./terminal.js";
import { paint } from "./terminal.js";

/** Exit status for sbx's own failures (the sandbox could not be created, a file could not be read...), as `docker run` uses. */
export const EXIT_SBX_ERROR = 125;
/** Exit status when the command ran past `--timeout` and was killed, as `timeout(1)` uses. */
export const EXIT_TIMEOUT = 124;
/** Exit status for a command line sbx does not understand. */
export const EXIT_USAGE = 2;

/** A mistake in the command line itself (unknown flag, missing argument). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

const REMEDIES: Partial<Record<SbxErrorCode, string>> = {
  SBX_CAPABILITY_NOT_SUPPORTED: "Pick a backend that supports it with --target (see `sbx doctor`), or drop the option.",
  SBX_INVALID_ARGUMENT: "Fix the option named above; `sbx <command> --help` lists them.",
  SBX_SANDBOX_NOT_FOUND: "The sandbox is gone (expired or killed); run again to create a new one.",
  SBX_SANDBOX_CLOSED: "Run again to create a new sandbox.",
  SBX_TIMEOUT: "Raise --timeout, or make the command finish sooner.",
  SBX_ABORTED: "Interrupted; nothing is left running.",
  SBX_FILE_NOT_FOUND: "Check the path; sandbox paths are relative to the workspace.",
  SBX_PATH: "Use a path inside the sandbox workspace.",
  SBX_PROVIDER: "The backend failed; retry, and check the backend with `sbx doctor`.",
  SBX_POLICY_NOT_ENFORCED: "The backend could not enforce the policy asked for; use a backend that can (see `sbx doctor`).",
  SBX_OUT_OF_MEMORY: "Give the sandbox more memory, or use less.",
  SBX_UNSUPPORTED_SPECIFICATION: "Install matching versions of @sbx/core and the adapter.",
};

/** The remedy for an error: the error's own (`BackendUnavailableError.remedy`) or the standard one for its code. */
export function remedyFor(error: unknown): string {
  if (isSbxError(error)) {
    const own = (error as { remedy?: unknown }).remedy;
    if (typeof own === "string" && own.length > 0) return own;
    return REMEDIES[error.code] ?? "";
  }
  if (error instanceof UsageError) return "Run `sbx --help` for usage.";
  return "";
}

/** The exit status for an error. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError) return EXIT_USAGE;
  if (isSbxError(error, "SBX_TIMEOUT")) return EXIT_TIMEOUT;
  return EXIT_SBX_ERROR;
}

/** A JSON view of an error: code, message, remedy, retryable. */
export function errorToJson(error: unknown): Record<string, unknown> {
  if (isSbxError(error))
    return {
      code: error.code,
      name: error.name,
      message: error.message,
      remedy: remedyFor(error),
      retryable: error.retryable,
      backend: error.backend ?? null,
    };
  if (error instanceof UsageError)
    return { code: "USAGE", name: error.name, message: error.message, remedy: remedyFor(error), retryable: false, backend: null };
  return {
    code: "INTERNAL",
    name: error instanceof Error ? error.name : "Error",
    message: error instanceof Error ? error.message : String(error),
    remedy: "This is a bug in sbx; please report it.",
    retryable: false,
    backend: null,
  };
}

/** Prints an error: with `--json` as `{ "error": {...} }` on stdout, else `error [CODE]: message` and `remedy: ...` on stderr. */
export function reportError(environment: CliEnvironment, mode: OutputMode, error: unknown): number {
  const view = errorToJson(error);
  if (mode.json) environment.stdout.write(`${JSON.stringify({ error: view }, null, 2)}\n`);
  else {
    environment.stderr.write(`${paint(mode.color, "red", "error")} [${String(view.code)}]: ${String(view.message)}\n`);
    if (view.remedy) environment.stderr.write(`${paint(mode.color, "yellow", "remedy")}: ${String(view.remedy)}\n`);
  }
  return exitCodeFor(error);
}
