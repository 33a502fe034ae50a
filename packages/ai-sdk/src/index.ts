export { createSandboxSession, type SbxSandboxSession, type SandboxSessionOptions } from "./sandbox-session.js";
export {
  createSandboxTools,
  DEFAULT_TOOL_OUTPUT_BYTES,
  type SandboxToolsOptions,
  type SandboxTools,
  type SandboxToolsWithKill,
  type RunCommandToolOutput,
  type RunCodeToolOutput,
  type ReadFileToolOutput,
  type WriteFileToolOutput,
  type ListFolderToolOutput,
} from "./sandbox-tools.js";
export { truncateForModel, type TruncatedText } from "./truncate.js";
export type { ToolErrorOutput } from "./tool-errors.js";
