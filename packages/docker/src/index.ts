export { createSandboxProvider, docker, PROCESS_SESSION } from "./docker-provider.js";
export { DOCKER_CAPABILITIES } from "./docker-capabilities.js";
export { sweepOrphans, orphanReason, volumeOrphanReason, type SweepResult } from "./sweep-orphans.js";
export { listSandboxes, type ListedSandbox } from "./list-sandboxes.js";
export {
  dockerSettingsSchema,
  parseDockerSettings,
  type DockerSettings,
  type ResolvedDockerSettings,
  type PullProgressEvent,
} from "./docker-settings.js";
export { MANAGED_LABEL, OWNER_PID_LABEL, OWNER_HOST_LABEL, SESSION_LABEL, EXPIRES_AT_LABEL } from "./labels.js";
export { dockerContainer } from "./native.js";
export { HelperOutputTooLargeError, HELPER_OUTPUT_LIMIT_BYTES } from "./exec-process.js";
