/** Every sbx error carries this symbol, so errors are recognised across duplicate installs of `@sbx/core`. */
const SBX_ERROR_MARKER = Symbol.for("sbx.error");

/** Stable error codes. Codes never change meaning; messages may. */
export type SbxErrorCode =
  | "SBX_CAPABILITY_NOT_SUPPORTED"
  | "SBX_BACKEND_UNAVAILABLE"
  | "SBX_INVALID_ARGUMENT"
  | "SBX_SANDBOX_NOT_FOUND"
  | "SBX_SANDBOX_CLOSED"
  | "SBX_TIMEOUT"
  | "SBX_ABORTED"
  | "SBX_FILE_NOT_FOUND"
  | "SBX_PATH"
  | "SBX_PROVIDER"
  | "SBX_POLICY_NOT_ENFORCED"
  | "SBX_OUT_OF_MEMORY"
  | "SBX_UNSUPPORTED_SPECIFICATION"
  | "SBX_FILE_TOO_LARGE"
  | "SBX_CALLBACK_FAILED"
  | "SBX_CREDENTIAL_ISSUE"
  | "SBX_CREDENTIAL_REVOCATION"
  | "SBX_CREDENTIAL_STORE_UNSAFE"
  | "SBX_INTERPRETER_LOST"
  | "SBX_RUNTIME_MISSING"
  | "SBX_TOO_MANY_PROCESSES"
  | "SBX_SANDBOX_PAUSED";

/** Options shared by every sbx error constructor. */
export interface SbxErrorOptions {
  /** What happened and what to do next. */
  message: string;
  /** The backend involved, for example `"docker"`, when there is one. */
  backend?: string;
  /** Whether the same call may succeed if tried again. Default false. */
  retryable?: boolean;
  /** The underlying error, kept for debugging (for example the backend SDK's own error). */
  cause?: unknown;
}

/**
 * The base of every error sbx throws. Check with `SbxError.isInstance(error)` or
 * `isSbxError(error, "SBX_TIMEOUT")` rather than `instanceof`, which fails when two copies of
 * `@sbx/core` are installed.
 */
export class SbxError extends Error {
  /** Stable machine-readable code; the contract. */
  readonly code: SbxErrorCode;
  /** The backend involved, if any. */
  readonly backend: string | undefined;
  /** Whether retrying the same call may succeed. */
  readonly retryable: boolean;
  private readonly [SBX_ERROR_MARKER] = true;

  constructor(code: SbxErrorCode, options: SbxErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SbxError";
    this.code = code;
    this.backend = options.backend;
    this.retryable = options.retryable ?? false;
  }

  /** True for any sbx error from any copy of `@sbx/core`. */
  static isInstance(error: unknown): error is SbxError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[SBX_ERROR_MARKER] === true;
  }

  /** A JSON-safe view: code, name, message, backend, retryable. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, backend: this.backend, retryable: this.retryable };
  }
}

/** True when `error` is an sbx error, optionally with the given code. */
export function isSbxError(error: unknown, code?: SbxErrorCode): error is SbxError {
  return SbxError.isInstance(error) && (code === undefined || error.code === code);
}
