export { createSandboxMcpServer, AUDIT_RESOURCE_URI, TOOL_NAMES, type SandboxMcpSession } from "./server.js";
export { serveStdio } from "./serve-stdio.js";
export {
  serveHttp,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  TOO_MANY_SESSIONS_ERROR_CODE,
  type HttpServeOptions,
  type HttpMcpServer,
} from "./serve-http.js";
export { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES, type SandboxMcpServerOptions } from "./options.js";
export { describeToolError, toolError, type ToolErrorView } from "./tool-errors.js";
export { truncateForModel, type TruncatedText } from "./truncate.js";
export { SandboxHolder } from "./sandbox-holder.js";
