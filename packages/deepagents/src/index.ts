export { SbxSandbox, DEFAULT_COMMAND_TIMEOUT_MS, type SbxSandboxOptions, type FileSearchMode } from "./sbx-sandbox.js";
export { fileOperationError } from "./file-errors.js";
export { mergedCommand } from "./merged-output.js";
