export {
  SbxMastraSandbox,
  DEFAULT_COMMAND_TIMEOUT_MS,
  TIMED_OUT_EXIT_CODE,
  type SbxMastraSandboxOptions,
  type SbxMastraSandboxSource,
} from "./sbx-mastra-sandbox.js";
export { RetainedOutput } from "./retained-output.js";
