export { createSandboxProvider, e2b, DEFAULT_E2B_TEMPLATE } from "./e2b-provider.js";
export { E2B_CAPABILITIES } from "./e2b-capabilities.js";
export { E2BDriver, E2B_WORKSPACE, KILLED_EXIT_CODE, NO_STREAM_DEADLINE_MS, type E2BDriverOptions } from "./e2b-driver.js";
export { planE2BNetwork, toAllowOutEntry, E2B_ALL_TRAFFIC, type E2BNetworkPlan, type E2BNetworkRequest } from "./e2b-network-policy.js";
export { e2bSettingsSchema, parseE2BSettings, connectionOptionsOf, type E2BSettings, type ResolvedE2BSettings } from "./e2b-settings.js";
export { mapE2BError, E2B_KEY_REMEDY, type E2BErrorContext } from "./map-e2b-error.js";
export { mapE2BResult, mapE2BExecutionError, E2B_RESULT_MIME_TYPES, type E2BResultLike } from "./map-e2b-result.js";
export { KILL_PROCESS_TREE_SCRIPT } from "./kill-process-tree.js";
export { exitCodeOfEnd, processClientOf, startHeaders, type ProcessStartClient, type ProcessStartEvent } from "./envd-process-stream.js";
