/** The Docker exec helpers, shared with the Modal emulator through `@sbx/emulator-kit`. */
export {
  runExec,
  startExec,
  toEnvironmentList,
  type CollectedExec,
  type ExecOptions,
  type ExecOutputHandlers,
  type RunningExec,
} from "@sbx/emulator-kit";
