import { SbxError } from "../errors/index.js";
import type { SandboxLogEntry, SandboxLogger } from "../v1/logging.js";
import { redactText } from "../security/redaction.js";

/** The environment variable that turns on the stderr debug logger: `SBX_DEBUG=1`. */
export const DEBUG_ENVIRONMENT_VARIABLE = "SBX_DEBUG";

const MAX_DETAIL_CHARACTERS = 200;

/** Writes each entry as one line to stderr, prefixed `[sbx]`. */
export const stderrLogger: SandboxLogger = (entry) => {
  process.stderr.write(`[sbx] ${entry.message}\n`);
};

/** The logger to use: the `logger` option, else the stderr logger when `SBX_DEBUG` is set (and not `0`/`false`), else none. */
export function resolveLogger(
  option: SandboxLogger | undefined,
  environment: Readonly<Record<string, string | undefined>> = process.env,
): SandboxLogger | undefined {
  if (option) return option;
  const flag = environment[DEBUG_ENVIRONMENT_VARIABLE]?.trim().toLowerCase();
  return flag && flag !== "0" && flag !== "false" ? stderrLogger : undefined;
}

/** One backend call as its log line describes it. */
export interface CallDescription {
  /** Backend name. */
  readonly backend: string;
  /** The driver method (or `create` / `connect`). */
  readonly operation: string;
  /** The sandbox, once there is one. */
  readonly sandboxId?: string;
  /** What the call was about (a command line, a path): redacted and cut before it is logged. */
  readonly detail?: string;
}

/** Redacts first, then cuts: cutting first could leave part of a secret that no longer matches. */
function describe(text: string, secrets: readonly string[]): string {
  const redacted = redactText(text, secrets);
  return redacted.length > MAX_DETAIL_CHARACTERS ? `${redacted.slice(0, MAX_DETAIL_CHARACTERS)}…` : redacted;
}

function emit(logger: SandboxLogger, entry: SandboxLogEntry): void {
  try {
    logger(entry);
  } catch {
    // A logger is a debugging aid: its failure must not change what sbx reports.
  }
}

/**
 * Starts timing one backend call; the returned function logs it (operation, duration, outcome), secrets redacted.
 * Nothing is wrapped: the caller calls the backend itself and reports how it ended.
 */
export function startCallLog(
  logger: SandboxLogger,
  secrets: readonly string[],
  call: CallDescription,
): (outcome: "ok" | "error", error?: unknown) => void {
  const startedAt = performance.now();
  return (outcome, error) => {
    const durationMs = Math.round((performance.now() - startedAt) * 10) / 10;
    const detail = call.detail === undefined ? undefined : describe(call.detail, secrets);
    const errorCode = outcome === "error" ? (SbxError.isInstance(error) ? error.code : "SBX_PROVIDER") : undefined;
    const errorText = outcome === "error" ? describe(error instanceof Error ? error.message : String(error), secrets) : "";
    const message = `${call.backend}${call.sandboxId ? ` ${redactText(call.sandboxId, secrets)}` : ""} ${call.operation}${detail ? ` ${JSON.stringify(detail)}` : ""} ${outcome}${errorCode ? ` ${errorCode}: ${errorText}` : ""} (${durationMs} ms)`;
    emit(logger, {
      backend: call.backend,
      operation: call.operation,
      ...(call.sandboxId ? { sandboxId: call.sandboxId } : {}),
      ...(detail !== undefined ? { detail } : {}),
      durationMs,
      outcome,
      ...(errorCode ? { errorCode } : {}),
      message,
    });
  };
}

/** Times one backend call and logs it (operation, duration, outcome), secrets redacted. The call's result or error passes through unchanged. */
export async function loggedCall<Result>(
  logger: SandboxLogger | undefined,
  secrets: readonly string[],
  call: CallDescription,
  run: () => Promise<Result>,
): Promise<Result> {
  if (!logger) return run();
  const finish = startCallLog(logger, secrets, call);
  try {
    const result = await run();
    finish("ok");
    return result;
  } catch (error) {
    finish("error", error);
    throw error;
  }
}
