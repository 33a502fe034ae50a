import type { PathErrorReason } from "./path-error-reason.js";
import { SbxError, type SbxErrorOptions } from "./sbx-error.js";

/** A capability the backend does not declare was asked for. Nothing was emulated or weakened. */
export class CapabilityNotSupportedError extends SbxError {
  /** The capability asked for, for example `"EGRESS_ALLOWLIST"`. */
  readonly capability: string;
  /** Backends known to support it (registered adapters and the first-party ones). */
  readonly supportedBy: string[];
  constructor(options: Omit<SbxErrorOptions, "message"> & { capability: string; backend: string; supportedBy: string[]; detail?: string }) {
    const alternatives =
      options.supportedBy.length > 0 ? `Backends that support it: ${options.supportedBy.join(", ")}.` : "No known backend supports it.";
    super("SBX_CAPABILITY_NOT_SUPPORTED", {
      ...options,
      message: `The ${options.backend} backend does not support ${options.capability}${options.detail ? ` (${options.detail})` : ""}. ${alternatives}`,
    });
    this.name = "CapabilityNotSupportedError";
    this.capability = options.capability;
    this.supportedBy = [...options.supportedBy];
  }
}

/** The backend cannot be used here: its runtime is not running, or its adapter package is not installed. */
export class BackendUnavailableError extends SbxError {
  /** What to install or start to make the backend usable. */
  readonly remedy: string;
  /** Other backends that are usable here, if known. */
  readonly alternatives: string[];
  constructor(options: SbxErrorOptions & { backend: string; remedy: string; alternatives?: string[] }) {
    super("SBX_BACKEND_UNAVAILABLE", { retryable: true, ...options });
    this.name = "BackendUnavailableError";
    this.remedy = options.remedy;
    this.alternatives = options.alternatives ?? [];
  }
}

/** An argument failed validation. `field` names the offending option path, for example `"network.egress"`. */
export class InvalidArgumentError extends SbxError {
  /** Dotted path of the invalid field, or the parameter name. */
  readonly field: string;
  constructor(options: SbxErrorOptions & { field: string }) {
    super("SBX_INVALID_ARGUMENT", options);
    this.name = "InvalidArgumentError";
    this.field = options.field;
  }
}

/** No sandbox with that id exists (it expired, was killed, or never existed). */
export class SandboxNotFoundError extends SbxError {
  /** The id that was looked up. */
  readonly sandboxId: string;
  constructor(options: SbxErrorOptions & { sandboxId: string }) {
    super("SBX_SANDBOX_NOT_FOUND", options);
    this.name = "SandboxNotFoundError";
    this.sandboxId = options.sandboxId;
  }
}

/** The sandbox was killed or disposed; create a new one. */
export class SandboxClosedError extends SbxError {
  /** The id of the closed sandbox. */
  readonly sandboxId: string;
  constructor(options: Omit<SbxErrorOptions, "message"> & { sandboxId: string; operation: string; message?: string }) {
    super("SBX_SANDBOX_CLOSED", {
      ...options,
      message: options.message ?? `Cannot ${options.operation}: sandbox ${options.sandboxId} is closed. Create a new sandbox.`,
    });
    this.name = "SandboxClosedError";
    this.sandboxId = options.sandboxId;
  }
}

/** An operation ran past its time limit. For commands, `killed` says the command and its children were killed. */
export class TimeoutError extends SbxError {
  /** The limit that was exceeded, in milliseconds. */
  readonly timeoutMs: number;
  /** True when the timed-out work (and every process it started) was killed. */
  readonly killed: boolean;
  /** Output captured before the timeout, when the operation was a command. */
  readonly partialStdout: string;
  /** Error output captured before the timeout, when the operation was a command. */
  readonly partialStderr: string;
  constructor(options: SbxErrorOptions & { timeoutMs: number; killed: boolean; partialStdout?: string; partialStderr?: string }) {
    super("SBX_TIMEOUT", { retryable: true, ...options });
    this.name = "TimeoutError";
    this.timeoutMs = options.timeoutMs;
    this.killed = options.killed;
    this.partialStdout = options.partialStdout ?? "";
    this.partialStderr = options.partialStderr ?? "";
  }
}

/** The caller aborted through its `AbortSignal`. Named `AbortError` for web compatibility. */
export class AbortedError extends SbxError {
  constructor(options: Partial<SbxErrorOptions> = {}) {
    super("SBX_ABORTED", { ...options, message: options.message ?? "The operation was aborted by the caller." });
    this.name = "AbortError";
  }
}

/** A file or directory does not exist in the sandbox. */
export class FileNotFoundError extends SbxError {
  /** The sandbox path that was not found. */
  readonly path: string;
  constructor(options: Omit<SbxErrorOptions, "message"> & { path: string; message?: string }) {
    super("SBX_FILE_NOT_FOUND", { ...options, message: options.message ?? `No such file or directory in the sandbox: ${options.path}` });
    this.name = "FileNotFoundError";
    this.path = options.path;
  }
}

/**
 * A path is invalid or escapes the sandbox workspace (`..`, absolute paths outside the workspace, NUL bytes),
 * or names something that is not a regular file where one is required (a device, a FIFO, a symlink out of bounds).
 */
export class PathError extends SbxError {
  /** The path as given by the caller. */
  readonly path: string;
  /** Why it was refused: one of the closed union `PathErrorReason` (see `pathErrorReasonSchema`). */
  readonly reason: PathErrorReason;
  constructor(options: Omit<SbxErrorOptions, "message"> & { path: string; reason: PathErrorReason; message?: string }) {
    super("SBX_PATH", { ...options, message: options.message ?? `Refused path ${JSON.stringify(options.path)}: ${options.reason}.` });
    this.name = "PathError";
    this.path = options.path;
    this.reason = options.reason;
  }
}

/** The backend failed in a way sbx has no more specific error for. The backend's own error is `cause`. */
export class ProviderError extends SbxError {
  constructor(options: SbxErrorOptions) {
    super("SBX_PROVIDER", options);
    this.name = "ProviderError";
  }
}

/** A policy that was asked for could not be verified as applied, so the sandbox was refused (fail closed). */
export class PolicyNotEnforcedError extends SbxError {
  /** The policy, for example `"limits.memoryMiB"`. */
  readonly policy: string;
  constructor(options: SbxErrorOptions & { policy: string }) {
    super("SBX_POLICY_NOT_ENFORCED", options);
    this.name = "PolicyNotEnforcedError";
    this.policy = options.policy;
  }
}

/** A command was killed by the kernel's out-of-memory killer inside the sandbox's memory limit. */
export class OutOfMemoryError extends SbxError {
  /** The memory limit in MiB that was hit, when known. */
  readonly memoryMiB: number | undefined;
  constructor(options: SbxErrorOptions & { memoryMiB?: number }) {
    super("SBX_OUT_OF_MEMORY", options);
    this.name = "OutOfMemoryError";
    this.memoryMiB = options.memoryMiB;
  }
}

/** A provider implements a specification version this copy of `@sbx/core` does not know. */
export class UnsupportedSpecificationError extends SbxError {
  constructor(options: SbxErrorOptions) {
    super("SBX_UNSUPPORTED_SPECIFICATION", options);
    this.name = "UnsupportedSpecificationError";
  }
}

/**
 * An adapter declares a capability flag without the method that implements it, or the method without the flag (for
 * example `RECONNECT` on but no `connect`). Core refuses it when the provider is loaded (or, for a driver method, when
 * the driver is made), so the mismatch is found once instead of failing on every call. Same code as
 * `UnsupportedSpecificationError`: the adapter does not follow this core's protocol. Fix the adapter.
 */
export class CapabilityMethodMismatchError extends UnsupportedSpecificationError {
  /** The capability flag, for example `"RECONNECT"`. */
  readonly capability: string;
  /** The method that goes with it, for example `"connect"`. */
  readonly method: string;
  /** Where the method belongs: the provider (`SandboxProviderV1`) or the driver (`SandboxDriverV1`). */
  readonly holder: "provider" | "driver";
  /** True when the flag is on and the method missing; false when the method is present and the flag off. */
  readonly flagDeclared: boolean;
  constructor(
    options: Omit<SbxErrorOptions, "message"> & {
      backend: string;
      capability: string;
      method: string;
      holder: "provider" | "driver";
      flagDeclared: boolean;
    },
  ) {
    const where = options.holder === "provider" ? "provider" : "driver";
    const mismatch = options.flagDeclared
      ? `declares ${options.capability} but its ${where} has no ${options.method}() method`
      : `has a ${options.method}() method on its ${where} but does not declare ${options.capability}`;
    super({
      ...options,
      message: `The ${options.backend} adapter ${mismatch}. The flag and the method go together: add the method, or turn the flag off with defineCapabilities() (and remove the method). Fix or upgrade the adapter.`,
    });
    this.name = "CapabilityMethodMismatchError";
    this.capability = options.capability;
    this.method = options.method;
    this.holder = options.holder;
    this.flagDeclared = options.flagDeclared;
  }
}

/**
 * A whole-file read (or a download with a byte limit) was refused because the file is larger than the limit.
 * Nothing past the limit was read into memory or written to the host. Raise the limit named by `option`, or read the
 * file as a stream.
 */
export class FileTooLargeError extends SbxError {
  /** The sandbox path. */
  readonly path: string;
  /** The file's size in bytes when the backend reported it, else the bytes seen before the read was refused. */
  readonly sizeBytes: number;
  /** The limit that was exceeded, in bytes. */
  readonly limitBytes: number;
  /** The option that raises the limit, for example `"maxBytes"`. */
  readonly option: string;
  constructor(
    options: Omit<SbxErrorOptions, "message"> & {
      path: string;
      sizeBytes: number;
      limitBytes: number;
      option: string;
      atLeast?: boolean;
      message?: string;
    },
  ) {
    const size = `${options.atLeast ? "at least " : ""}${options.sizeBytes} bytes`;
    super("SBX_FILE_TOO_LARGE", {
      ...options,
      message:
        options.message ??
        `Refused to read ${JSON.stringify(options.path)}: it is ${size}, over the ${options.limitBytes}-byte limit. Pass a larger { ${options.option} } or read it with { format: "stream" }.`,
    });
    this.name = "FileTooLargeError";
    this.path = options.path;
    this.sizeBytes = options.sizeBytes;
    this.limitBytes = options.limitBytes;
    this.option = options.option;
  }
}

/**
 * A callback driven by sandbox output threw: one of yours (`onStdout`, `onStderr`), named in `callback`, or sbx's
 * own handling of the output (`callback: "sbx"`). The error never reaches the event loop; the command or code run was
 * stopped and this error is the call's outcome. The thrown value is `cause`.
 */
export class CallbackError extends SbxError {
  /** Which callback threw: `"onStdout"`, `"onStderr"`, `"onOutput"`, or `"sbx"` for sbx's own output handling. */
  readonly callback: string;
  constructor(options: Omit<SbxErrorOptions, "message"> & { callback: string; message?: string }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super("SBX_CALLBACK_FAILED", {
      ...options,
      message:
        options.message ??
        (options.callback === "sbx"
          ? `sbx failed while handling the sandbox's output (${reason}); the run was stopped. This is a defect in sbx: please report it.`
          : `Your ${options.callback} callback threw (${reason}); the run was stopped. Fix the callback, or catch inside it.`),
    });
    this.name = "CallbackError";
    this.callback = options.callback;
  }
}

/**
 * A command was refused because the sandbox already runs as many commands as `maxLiveProcesses` allows (a
 * `createSandbox` option, default 256). Nothing was started. Not retryable as such: wait for or kill a running command
 * (`handle.wait()`, `handle.kill()`) first, or create the sandbox with a larger `maxLiveProcesses`.
 */
export class TooManyProcessesError extends SbxError {
  /** The bound that was reached (`maxLiveProcesses`). */
  readonly limit: number;
  constructor(options: Omit<SbxErrorOptions, "message" | "retryable"> & { limit: number; message?: string }) {
    super("SBX_TOO_MANY_PROCESSES", {
      ...options,
      retryable: false,
      message:
        options.message ??
        `Refused to start a command: this sandbox already has ${options.limit} live commands, the maxLiveProcesses limit. Wait for or kill one (handle.wait(), handle.kill()) first, or create the sandbox with a larger { maxLiveProcesses } (default 256).`,
    });
    this.name = "TooManyProcessesError";
    this.limit = options.limit;
  }
}

/**
 * A call was refused because the sandbox is paused (`sandbox.pause()`, ADR 0055): nothing in it runs until
 * `sandbox.resume()`. Not retryable: the same call fails the same way until the caller resumes the sandbox.
 */
export class SandboxPausedError extends SbxError {
  /** The id of the paused sandbox. */
  readonly sandboxId: string;
  /** What was refused, for example `"run a command"`. */
  readonly operation: string;
  constructor(options: Omit<SbxErrorOptions, "message" | "retryable"> & { sandboxId: string; operation: string; message?: string }) {
    super("SBX_SANDBOX_PAUSED", {
      ...options,
      retryable: false,
      message:
        options.message ??
        `Cannot ${options.operation}: sandbox ${options.sandboxId} is paused (nothing in it runs). Call sandbox.resume() first; its lifetime keeps running while paused.`,
    });
    this.name = "SandboxPausedError";
    this.sandboxId = options.sandboxId;
    this.operation = options.operation;
  }
}
