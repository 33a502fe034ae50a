export { runCli, USAGE } from "./cli.js";
export type { CliEnvironment, CliStream, OutputMode } from "./terminal.js";
export { ProgressDisplay, PullProgressAggregator } from "./progress.js";
export { saveRichResults, printExecution, type RenderedResult } from "./commands/code.js";
export { EXIT_SBX_ERROR, EXIT_TIMEOUT, EXIT_USAGE, remedyFor } from "./errors.js";
export { renderDoctor } from "./commands/doctor.js";
