import {
  AbortedError,
  BackendUnavailableError,
  FileNotFoundError,
  InvalidArgumentError,
  PathError,
  ProviderError,
  SandboxNotFoundError,
  SbxError,
  TimeoutError,
} from "@sbx/core";

/** Where an SDK error happened, for the message and the typed fields of the mapped error. */
export interface E2BErrorContext {
  /** What the adapter was doing, for example `"read a file"`. */
  readonly operation: string;
  /** The sandbox involved, when there is one. */
  readonly sandboxId?: string;
  /** The sandbox path involved, for file operations. */
  readonly path?: string;
  /** The request timeout in force, for `TimeoutError.timeoutMs`. */
  readonly timeoutMs?: number;
}

/** Where to get an E2B API key; used in every authentication message. */
export const E2B_KEY_REMEDY = "Create an API key at https://e2b.dev/dashboard (API keys tab) and set E2B_API_KEY, or pass settings.apiKey.";

function nameOf(error: unknown): string {
  if (typeof error !== "object" || error === null) return "";
  const name = (error as { name?: unknown }).name;
  return typeof name === "string" ? name : "";
}

/**
 * Connect (envd RPC) error codes, for errors from the SDK's envd client that the SDK did not translate itself
 * (the raw-byte command stream), mapped to the SDK error name the SDK would have used.
 */
const CONNECT_CODE_NAMES: Record<number, string> = {
  1: "AbortError", // canceled
  3: "InvalidArgumentError",
  4: "TimeoutError", // deadline_exceeded
  5: "NotFoundError",
  8: "RateLimitError", // resource_exhausted
  14: "SandboxNotFoundError", // unavailable: the sandbox is not running anymore
  16: "AuthenticationError",
};

function connectErrorName(error: unknown): string | undefined {
  if (nameOf(error) !== "ConnectError") return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" ? (CONNECT_CODE_NAMES[code] ?? "ConnectError") : "ConnectError";
}

/**
 * The SDKs' wording when their TimeoutError means the sandbox is gone rather than a request timing out: e2b's
 * `formatSandboxTimeoutError` (502 from the edge, Connect `unavailable`), e2b's and the code interpreter's
 * "killed mid-request" errors (raised after a dropped connection once `/health` answered 502).
 */
const SANDBOX_GONE_TIMEOUT = /sandbox was killed|end of life|likely due to sandbox timeout|not running anymore/i;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Maps an error thrown by the `e2b` or `@e2b/code-interpreter` SDK onto a core error, keeping the SDK error as
 * `cause`. Matching is by error name, so it works across SDK copies and versions:
 *
 * | SDK error | core error |
 * |---|---|
 * | `SandboxNotFoundError` (sandbox gone, expired or never existed) | `SandboxNotFoundError` |
 * | `FileNotFoundError` | `FileNotFoundError` (path given) |
 * | `NotFoundError` (deprecated generic) | `FileNotFoundError` for file operations, else `SandboxNotFoundError` |
 * | `TimeoutError` saying the sandbox is gone: killed mid-request ("The sandbox was killed or reached its end of life while the request was in flight", e2b; "The sandbox was killed while the request was in progress", code interpreter) or already gone (the edge's 502: "likely due to sandbox timeout") | `SandboxNotFoundError` |
 * | `TimeoutError` (request timeout) | `TimeoutError` (`killed: false`, retryable) |
 * | `AuthenticationError` (401, missing or rejected key) | `BackendUnavailableError` (not retryable) with how to get a key |
 * | `RateLimitError` (429 after the SDK's own retries), `ServiceBusyError` (503) | `ProviderError`, retryable |
 * | `InvalidArgumentError` | `InvalidArgumentError` (`field: "e2b"`), or `PathError` for file operations |
 * | `AbortError` | `AbortedError` |
 * | `ConnectError` from envd (raw-byte command stream) | by Connect code, as the SDK would: unavailable → `SandboxNotFoundError`, deadline → `TimeoutError`, ... |
 * | anything else (`SandboxError`, `NotEnoughSpaceError`, `TemplateError`, network errors) | `ProviderError` |
 *
 * Authentication is `BackendUnavailableError` because nothing can be done with the backend until the key is fixed,
 * the same situation as a missing key.
 */
export function mapE2BError(error: unknown, context: E2BErrorContext): SbxError {
  if (SbxError.isInstance(error)) return error;
  const name = connectErrorName(error) ?? nameOf(error);
  const detail = messageOf(error);
  const where = context.sandboxId ? ` (sandbox ${context.sandboxId})` : "";
  const isFileOperation = context.path !== undefined;
  switch (name) {
    case "SandboxNotFoundError":
      return new SandboxNotFoundError({
        backend: "e2b",
        cause: error,
        sandboxId: context.sandboxId ?? "",
        message: `E2B sandbox not found while trying to ${context.operation}${where}: it was killed, reached its timeout, or never existed. ${detail}`,
      });
    case "FileNotFoundError":
      return new FileNotFoundError({ backend: "e2b", cause: error, path: context.path ?? "" });
    case "NotFoundError":
      if (isFileOperation) return new FileNotFoundError({ backend: "e2b", cause: error, path: context.path! });
      return new SandboxNotFoundError({
        backend: "e2b",
        cause: error,
        sandboxId: context.sandboxId ?? "",
        message: `E2B reported "not found" while trying to ${context.operation}${where}: ${detail}`,
      });
    case "TimeoutError":
      if (SANDBOX_GONE_TIMEOUT.test(detail)) {
        return new SandboxNotFoundError({
          backend: "e2b",
          cause: error,
          sandboxId: context.sandboxId ?? "",
          message: `The E2B sandbox is gone (killed or past its timeout) while trying to ${context.operation}${where}: ${detail}`,
        });
      }
      return new TimeoutError({
        backend: "e2b",
        cause: error,
        timeoutMs: context.timeoutMs ?? 0,
        killed: false,
        message: `E2B timed out while trying to ${context.operation}${where}: ${detail}`,
      });
    case "AuthenticationError":
      return new BackendUnavailableError({
        backend: "e2b",
        cause: error,
        retryable: false,
        remedy: E2B_KEY_REMEDY,
        message: `E2B rejected the API key while trying to ${context.operation}: ${detail} ${E2B_KEY_REMEDY}`,
      });
    case "RateLimitError":
      return new ProviderError({
        backend: "e2b",
        cause: error,
        retryable: true,
        message: `E2B rate limit reached while trying to ${context.operation}${where}; retry later. ${detail}`,
      });
    case "ServiceBusyError":
      return new ProviderError({
        backend: "e2b",
        cause: error,
        retryable: true,
        message: `E2B is temporarily busy (503) while trying to ${context.operation}${where}; nothing was changed, retry later. ${detail}`,
      });
    case "InvalidArgumentError":
      if (isFileOperation)
        return new PathError({
          backend: "e2b",
          cause: error,
          path: context.path!,
          reason: "invalid",
          message: `E2B refused the path ${JSON.stringify(context.path)} while trying to ${context.operation}: ${detail}`,
        });
      return new InvalidArgumentError({
        backend: "e2b",
        cause: error,
        field: "e2b",
        message: `E2B refused an argument while trying to ${context.operation}${where}: ${detail}`,
      });
    case "AbortError":
      return new AbortedError({ backend: "e2b", cause: error });
    default:
      return new ProviderError({
        backend: "e2b",
        cause: error,
        message: `The e2b backend failed while trying to ${context.operation}${where}: ${detail}`,
      });
  }
}
