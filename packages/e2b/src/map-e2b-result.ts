import type { ExecutionError, ExecutionResult } from "@sbx/core";

/** The fields of a code interpreter `Result` this mapping reads (structural, so any SDK version fits). */
export interface E2BResultLike {
  readonly isMainResult: boolean;
  readonly text?: string;
  readonly html?: string;
  readonly markdown?: string;
  readonly svg?: string;
  readonly png?: string;
  readonly jpeg?: string;
  readonly pdf?: string;
  readonly latex?: string;
  readonly json?: unknown;
  readonly javascript?: string;
  readonly data?: unknown;
  readonly chart?: unknown;
  readonly extra?: Record<string, unknown>;
  /**
   * Every field the server sent (the SDK's `Result.raw`). The server puts MIME types it has no field for (for
   * example `application/vnd.plotly.v1+json`) under `extra`, which the SDK's own `extra` does not carry over.
   */
  readonly raw?: Record<string, unknown>;
}

/**
 * E2B result field → MIME type. Binary types (png, jpeg, pdf) stay base64, as E2B delivers them.
 * `data` and `chart` are E2B's own structured extractions (dataframes, charts), under vendor MIME types.
 */
export const E2B_RESULT_MIME_TYPES = {
  text: "text/plain",
  html: "text/html",
  markdown: "text/markdown",
  svg: "image/svg+xml",
  png: "image/png",
  jpeg: "image/jpeg",
  pdf: "application/pdf",
  latex: "text/latex",
  json: "application/json",
  javascript: "application/javascript",
  data: "application/vnd.e2b.data+json",
  chart: "application/vnd.e2b.chart+json",
} as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Maps one E2B result (from the code interpreter's own result channel, never from stdout) to the core
 * `ExecutionResult`: a MIME bundle. Fields E2B did not send (absent or null) are left out; the other formats
 * (the server's `extra`, and top-level fields the SDK does not know) keep their key when it already looks like a MIME
 * type.
 */
export function mapE2BResult(result: E2BResultLike): ExecutionResult {
  const data: Record<string, string> = {};
  for (const [field, mime] of Object.entries(E2B_RESULT_MIME_TYPES)) {
    const value = (result as unknown as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) data[mime] = asText(value);
  }
  const serverExtra = result.raw?.extra;
  const extraFormats = { ...(isPlainObject(serverExtra) ? serverExtra : {}), ...result.extra };
  for (const [key, value] of Object.entries(extraFormats)) {
    if (value === undefined || value === null) continue;
    data[key.includes("/") ? key : `application/vnd.e2b.${key}`] = asText(value);
  }
  return { isMainResult: result.isMainResult === true, data };
}

/** Maps the code interpreter's error (raised by the code) to the core `ExecutionError`. */
export function mapE2BExecutionError(error: { name: string; value: string; traceback: string } | undefined | null): ExecutionError | null {
  if (!error) return null;
  return { name: String(error.name), value: String(error.value), traceback: String(error.traceback ?? "") };
}
