import {
  AbortedError,
  BackendUnavailableError,
  FileNotFoundError,
  InvalidArgumentError,
  PathError,
  type PathErrorReason,
  ProviderError,
  SandboxNotFoundError,
  SbxError,
  TimeoutError,
} from "@sbx/core";

/** Where an SDK error happened, for the message and the typed fields of the mapped error. */
export interface ModalErrorContext {
  /** What the adapter was doing, for example `"read a file"`. */
  readonly operation: string;
  /** The sandbox involved, when there is one. */
  readonly sandboxId?: string;
  /** The sandbox path involved, for file operations. */
  readonly path?: string;
  /** The time limit in force, for `TimeoutError.timeoutMs`. */
  readonly timeoutMs?: number;
}

/** Where to get Modal credentials; used in every authentication message. */
export const MODAL_CREDENTIALS_REMEDY =
  "Create a token at https://modal.com/settings/tokens (or run `modal token new`) and set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or pass settings.tokenId and settings.tokenSecret.";

/** gRPC status codes (nice-grpc `Status`). */
const GRPC = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

function nameOf(error: unknown): string {
  if (typeof error !== "object" || error === null) return "";
  const name = (error as { name?: unknown }).name;
  return typeof name === "string" ? name : "";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function grpcCodeOf(error: unknown): number | undefined {
  if (nameOf(error) !== "ClientError") return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" ? code : undefined;
}

/**
 * Maps an error thrown by the `modal` SDK onto a core error, keeping the SDK error as `cause`. Matching is by error
 * name and gRPC code, so it works across SDK copies and versions:
 *
 * | SDK error | core error |
 * |---|---|
 * | `SandboxFilesystemNotFoundError` | `FileNotFoundError` (path given) |
 * | `SandboxFilesystemIsADirectoryError` / `NotADirectoryError` / `PathAlreadyExistsError` / `DirectoryNotEmptyError` | `PathError` (`is-a-directory` / `not-a-directory` / `exists` / `is-a-directory`) |
 * | `SandboxFilesystemPermissionError`, `FileTooLargeError`, other `SandboxFilesystemError` | `ProviderError` (not retryable) |
 * | `NotFoundError` ("The Sandbox is unavailable", or any not-found outside files) | `SandboxNotFoundError` |
 * | `ConflictError` (sandbox already finished), `SandboxTimeoutError`, `ClientClosedError` | `SandboxNotFoundError` |
 * | `ClientError` NOT_FOUND / FAILED_PRECONDITION (task finished: the sandbox was terminated or timed out) | `SandboxNotFoundError` |
 * | `ClientError` UNAUTHENTICATED / PERMISSION_DENIED, "missing credentials" | `BackendUnavailableError` (not retryable) with how to get a token |
 * | `ClientError` DEADLINE_EXCEEDED, SDK `TimeoutError` | `TimeoutError` (`killed: false`, retryable) |
 * | `ClientError` UNAVAILABLE / RESOURCE_EXHAUSTED, `ResourceExhaustedError` | `ProviderError`, retryable |
 * | `InvalidError`, `ClientError` INVALID_ARGUMENT, `AlreadyExistsError` | `InvalidArgumentError` (`PathError` for file operations) |
 * | `AbortError` | `AbortedError` |
 * | anything else | `ProviderError` |
 */
export function mapModalError(error: unknown, context: ModalErrorContext): SbxError {
  if (SbxError.isInstance(error)) return error;
  const name = nameOf(error);
  const code = grpcCodeOf(error);
  const detail = messageOf(error);
  const where = context.sandboxId ? ` (sandbox ${context.sandboxId})` : "";
  const path = context.path;
  const gone = (why: string) =>
    new SandboxNotFoundError({
      backend: "modal",
      cause: error,
      sandboxId: context.sandboxId ?? "",
      message: `The Modal sandbox is gone while trying to ${context.operation}${where}: ${why} ${detail}`,
    });
  const pathError = (reason: PathErrorReason) =>
    new PathError({
      backend: "modal",
      cause: error,
      path: path ?? "",
      reason,
      message: `Modal refused ${JSON.stringify(path)} while trying to ${context.operation} (${reason}): ${detail}`,
    });
  switch (name) {
    case "SandboxFilesystemNotFoundError":
      return new FileNotFoundError({ backend: "modal", cause: error, path: path ?? "" });
    case "SandboxFilesystemIsADirectoryError":
    case "SandboxFilesystemDirectoryNotEmptyError":
      return pathError("is-a-directory");
    case "SandboxFilesystemNotADirectoryError":
      return pathError("not-a-directory");
    case "SandboxFilesystemPathAlreadyExistsError":
      return pathError("exists");
    case "SandboxFilesystemPermissionError":
      return new ProviderError({
        backend: "modal",
        cause: error,
        retryable: false,
        message: `Permission denied in the Modal sandbox while trying to ${context.operation} ${JSON.stringify(path)}: ${detail}`,
      });
    case "SandboxFilesystemFileTooLargeError":
      return new ProviderError({
        backend: "modal",
        cause: error,
        retryable: false,
        message: `The file ${JSON.stringify(path)} is larger than Modal's filesystem API reads at once: ${detail}`,
      });
    case "SandboxFilesystemError":
      return new ProviderError({
        backend: "modal",
        cause: error,
        message: `Modal's filesystem API failed while trying to ${context.operation} ${JSON.stringify(path)}${where}: ${detail}`,
      });
    case "NotFoundError":
    case "ConflictError":
    case "SandboxTimeoutError":
    case "ClientClosedError":
      return gone("it was terminated, reached its timeout, or never existed.");
    case "InvalidError":
    case "AlreadyExistsError":
      if (path !== undefined) return pathError("invalid");
      return new InvalidArgumentError({
        backend: "modal",
        cause: error,
        field: "modal",
        message: `Modal refused an argument while trying to ${context.operation}${where}: ${detail}`,
      });
    case "TimeoutError":
      return new TimeoutError({
        backend: "modal",
        cause: error,
        timeoutMs: context.timeoutMs ?? 0,
        killed: false,
        message: `Modal timed out while trying to ${context.operation}${where}: ${detail}`,
      });
    case "ResourceExhaustedError":
      return new ProviderError({
        backend: "modal",
        cause: error,
        retryable: true,
        message: `Modal has no capacity right now while trying to ${context.operation}${where}; retry later. ${detail}`,
      });
    case "AbortError":
      return new AbortedError({ backend: "modal", cause: error });
  }
  if (/Profile is missing credentials|token credentials/i.test(detail)) {
    return new BackendUnavailableError({
      backend: "modal",
      cause: error,
      retryable: false,
      remedy: MODAL_CREDENTIALS_REMEDY,
      message: `Modal has no usable credentials: ${detail} ${MODAL_CREDENTIALS_REMEDY}`,
    });
  }
  switch (code) {
    case GRPC.NOT_FOUND:
      return gone("Modal does not know it (terminated long ago, or never existed).");
    case GRPC.FAILED_PRECONDITION:
      return gone("it has finished (terminated or past its timeout).");
    case GRPC.UNAUTHENTICATED:
    case GRPC.PERMISSION_DENIED:
      return new BackendUnavailableError({
        backend: "modal",
        cause: error,
        retryable: false,
        remedy: MODAL_CREDENTIALS_REMEDY,
        message: `Modal rejected the credentials while trying to ${context.operation}: ${detail} ${MODAL_CREDENTIALS_REMEDY}`,
      });
    case GRPC.DEADLINE_EXCEEDED:
      return new TimeoutError({
        backend: "modal",
        cause: error,
        timeoutMs: context.timeoutMs ?? 0,
        killed: false,
        message: `A Modal call timed out while trying to ${context.operation}${where}: ${detail}`,
      });
    case GRPC.UNAVAILABLE:
    case GRPC.RESOURCE_EXHAUSTED:
      return new ProviderError({
        backend: "modal",
        cause: error,
        retryable: true,
        message: `Modal is temporarily unavailable while trying to ${context.operation}${where}; retry later. ${detail}`,
      });
    case GRPC.INVALID_ARGUMENT:
    case GRPC.ALREADY_EXISTS:
      if (path !== undefined) return pathError("invalid");
      return new InvalidArgumentError({
        backend: "modal",
        cause: error,
        field: "modal",
        message: `Modal refused an argument while trying to ${context.operation}${where}: ${detail}`,
      });
    case GRPC.CANCELLED:
      return new AbortedError({
        backend: "modal",
        cause: error,
        message: `A Modal call was cancelled while trying to ${context.operation}${where}.`,
      });
  }
  return new ProviderError({
    backend: "modal",
    cause: error,
    message: `The modal backend failed while trying to ${context.operation}${where}: ${detail}`,
  });
}
