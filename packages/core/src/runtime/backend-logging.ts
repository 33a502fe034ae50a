import { SbxError } from "../errors/index.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import type { SandboxLogEntry, SandboxLogger } from "../v1/logging.js";
import { redactText } from "./redaction.js";

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

interface CallDescription {
  readonly backend: string;
  readonly operation: string;
  readonly sandboxId?: string;
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

/** Times one backend call and logs it (operation, duration, outcome), secrets redacted. The call's result or error passes through unchanged. */
export async function loggedCall<Result>(
  logger: SandboxLogger | undefined,
  secrets: readonly string[],
  call: CallDescription,
  run: () => Promise<Result>,
): Promise<Result> {
  if (!logger) return run();
  const startedAt = performance.now();
  const finish = (outcome: "ok" | "error", error?: unknown) => {
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
  try {
    const result = await run();
    finish("ok");
    return result;
  } catch (error) {
    finish("error", error);
    throw error;
  }
}

/** The driver methods that call the backend (all return promises). */
const LOGGED_METHODS = new Set([
  "spawn",
  "runCode",
  "createCodeContext",
  "readFile",
  "writeFile",
  "list",
  "stat",
  "remove",
  "mkdir",
  "rename",
  "destroy",
]);

/** What each driver method's log line says about its arguments (never environment values or file contents). */
function detailOf(operation: string, args: readonly unknown[]): string | undefined {
  const first = args[0];
  switch (operation) {
    case "spawn":
      return typeof (first as { command?: unknown })?.command === "string" ? (first as { command: string }).command : undefined;
    case "runCode":
      return typeof (first as { code?: unknown })?.code === "string" ? (first as { code: string }).code : undefined;
    case "rename":
      return `${String(first)} -> ${String(args[1])}`;
    case "readFile":
    case "writeFile":
    case "list":
    case "stat":
    case "remove":
    case "mkdir":
      return String(first);
    default:
      return undefined;
  }
}

/**
 * Wraps a driver so every method call is logged. The wrapper forwards everything else untouched (properties,
 * which optional methods exist), so core sees the same driver.
 */
export function withDriverLogging(
  driver: SandboxDriverV1,
  backend: string,
  logger: SandboxLogger | undefined,
  secrets: readonly string[],
): SandboxDriverV1 {
  if (!logger) return driver;
  return new Proxy(driver, {
    get(target, property, _receiver) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (typeof property !== "string" || !LOGGED_METHODS.has(property)) return (value as (...args: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) =>
        loggedCall(logger, secrets, { backend, operation: property, sandboxId: target.id, detail: detailOf(property, args) }, async () =>
          (value as (...args: unknown[]) => unknown).apply(target, args),
        );
    },
  });
}
