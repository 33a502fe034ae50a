import { BackendUnavailableError, InvalidArgumentError, ProviderError, SandboxNotFoundError, SbxError, TimeoutError } from "@sbx/core";
import type { CliResult } from "./container-cli.js";

/** What the adapter was doing when a CLI call failed, for the message and the typed fields. */
export interface AppleContainerErrorContext {
  /** What was being done, for example `"create a sandbox"`. */
  readonly operation: string;
  /** The sandbox involved, when there is one. */
  readonly sandboxId?: string;
  /** The call's timeout, for `TimeoutError.timeoutMs`. */
  readonly timeoutMs?: number;
}

/** What to run when the API server is down (never run by sbx: it registers a launchd agent and may download a kernel). */
export const START_SERVICE_REMEDY = "Start it with `container system start` (add --enable-kernel-install the first time), then retry.";
/** What to run when no kernel is configured. */
export const KERNEL_REMEDY =
  "Install the default kernel with `container system kernel set --recommended` (or `container system start --enable-kernel-install`).";

/** The CLI's last `Error: …` text, or its whole stderr, trimmed and bounded for a message. */
function errorText(result: CliResult): string {
  const text = result.stderr.trim() || result.stdout.trim();
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}

/**
 * Maps a failed `container` CLI call onto a core error. The CLI has no distinct exit codes (1 for every runtime
 * error, 64 for a usage error), so matching is on stderr substrings, as the CLI's own tests do:
 *
 * | CLI output | core error |
 * |---|---|
 * | call ended by its timeout or signal | `TimeoutError` (`killed: false`, retryable) |
 * | `XPC connection error` / `Ensure container system service has been started` | `BackendUnavailableError` saying to run `container system start` |
 * | `default kernel not configured` | `BackendUnavailableError` saying how to install the kernel |
 * | `not found` / `is not running` for the sandbox's container | `SandboxNotFoundError` |
 * | `image not found`, `minimum memory amount`, `invalid label`, `is not a directory`, `does not exist` at create | `InvalidArgumentError` |
 * | exit 64 (a flag this CLI does not know) | `ProviderError`, not retryable: the CLI is outside the tested range or the adapter is wrong |
 * | anything else | `ProviderError` with the CLI's text |
 */
export function mapAppleContainerError(result: CliResult, context: AppleContainerErrorContext): SbxError {
  const text = errorText(result);
  const where = context.sandboxId ? ` (sandbox ${context.sandboxId})` : "";
  if (result.stopped) {
    return new TimeoutError({
      backend: "apple-container",
      timeoutMs: context.timeoutMs ?? 0,
      killed: false,
      message: `The container CLI did not answer within ${context.timeoutMs ?? 0} ms while trying to ${context.operation}${where}.`,
    });
  }
  if (/XPC connection error|Ensure container system service has been started/.test(text)) {
    return new BackendUnavailableError({
      backend: "apple-container",
      retryable: false,
      remedy: START_SERVICE_REMEDY,
      message: `The container system service is not running (while trying to ${context.operation}). ${START_SERVICE_REMEDY} CLI said: ${text}`,
    });
  }
  if (/default kernel not configured/.test(text)) {
    return new BackendUnavailableError({
      backend: "apple-container",
      retryable: false,
      remedy: KERNEL_REMEDY,
      message: `The container system service has no Linux kernel configured. ${KERNEL_REMEDY} CLI said: ${text}`,
    });
  }
  if (/image not found|pull access denied|manifest unknown/i.test(text)) {
    return new InvalidArgumentError({
      backend: "apple-container",
      field: "target",
      message: `The image could not be found while trying to ${context.operation}: ${text}`,
    });
  }
  if (/minimum memory amount/.test(text)) {
    return new InvalidArgumentError({
      backend: "apple-container",
      field: "limits.memoryMiB",
      message: `container refused the memory limit: ${text}`,
    });
  }
  if (/is not a directory|does not exist|invalid label|invalid path given|unknown directive/.test(text) && context.operation === "create a sandbox") {
    return new InvalidArgumentError({
      backend: "apple-container",
      field: "mounts",
      message: `container refused the sandbox's configuration: ${text}`,
    });
  }
  if (context.sandboxId && /not found|is not running/.test(text)) {
    return new SandboxNotFoundError({
      backend: "apple-container",
      sandboxId: context.sandboxId,
      message: `The container ${context.sandboxId} is gone (stopped, deleted or past its lifetime) while trying to ${context.operation}: ${text}`,
    });
  }
  if (result.exitCode === 64) {
    return new ProviderError({
      backend: "apple-container",
      retryable: false,
      message: `The container CLI refused the arguments sbx gave it while trying to ${context.operation}${where} (exit 64): ${text}`,
    });
  }
  return new ProviderError({
    backend: "apple-container",
    message: `The container CLI failed while trying to ${context.operation}${where} (exit ${String(result.exitCode)}): ${text}`,
  });
}
