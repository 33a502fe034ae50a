import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isSbxError, type SbxErrorCode } from "@sbx/core";

const REMEDIES: Partial<Record<SbxErrorCode, string>> = {
  SBX_CAPABILITY_NOT_SUPPORTED: "This server's backend cannot do that; do without it, or ask the operator for a backend that can.",
  SBX_BACKEND_UNAVAILABLE: "The server's backend is not usable; the operator must fix it (see `sbx doctor`).",
  SBX_INVALID_ARGUMENT: "Fix the argument named in the message and call again.",
  SBX_SANDBOX_NOT_FOUND: "The sandbox is gone; call sandbox_create to get a new one.",
  SBX_SANDBOX_CLOSED: "The sandbox was killed; call sandbox_create to get a new one.",
  SBX_TIMEOUT: "Pass a larger timeoutMs, or make the work finish sooner; the timed-out work was killed.",
  SBX_ABORTED: "The call was cancelled.",
  SBX_FILE_NOT_FOUND: "Check the path with list_files; paths are relative to the workspace.",
  SBX_PATH: "Use a path inside the sandbox workspace.",
  SBX_PROVIDER: "The backend failed; retrying may help.",
  SBX_POLICY_NOT_ENFORCED: "The backend could not enforce the server's policy; the operator must use a backend that can.",
  SBX_OUT_OF_MEMORY: "Use less memory.",
  SBX_UNSUPPORTED_SPECIFICATION: "The operator must install matching sbx packages.",
};

/** The JSON view of an error returned to MCP clients. */
export interface ToolErrorView {
  /** Stable sbx error code, for example `"SBX_TIMEOUT"`, or `"INTERNAL"`. */
  readonly code: string;
  /** What happened. */
  readonly message: string;
  /** What to do next. */
  readonly remedy: string;
  /** Whether calling again may succeed. */
  readonly retryable: boolean;
}

/** Describes an error for a client: typed sbx errors keep their code; anything else is `INTERNAL`. */
export function describeToolError(error: unknown): ToolErrorView {
  if (isSbxError(error)) {
    const own = (error as { remedy?: unknown }).remedy;
    return {
      code: error.code,
      message: error.message,
      remedy: typeof own === "string" && own ? own : (REMEDIES[error.code] ?? ""),
      retryable: error.retryable,
    };
  }
  return {
    code: "INTERNAL",
    message: error instanceof Error ? error.message : String(error),
    remedy: "An unexpected server error; report it to the server's operator.",
    retryable: false,
  };
}

/**
 * Turns an error into an MCP tool error (`isError: true` result), so the model sees the code and remedy and the
 * transport stays healthy. Never a JSON-RPC failure.
 */
export function toolError(error: unknown): CallToolResult {
  const view = describeToolError(error);
  return {
    isError: true,
    content: [{ type: "text", text: `${view.code}: ${view.message}${view.remedy ? `\nRemedy: ${view.remedy}` : ""}` }],
    structuredContent: { error: view },
  };
}
