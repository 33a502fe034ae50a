export { createSandboxProvider, appleContainer, DEFAULT_APPLE_CONTAINER_IMAGE, APPLE_CONTAINER_WORKSPACE } from "./apple-container-provider.js";
export { APPLE_CONTAINER_CAPABILITIES } from "./apple-container-capabilities.js";
export {
  appleContainerSettingsSchema,
  parseAppleContainerSettings,
  type AppleContainerSettings,
  type ResolvedAppleContainerSettings,
  type AgentCommandsMode,
} from "./apple-container-settings.js";
export {
  parseVersionLine,
  parseServiceStatus,
  parseContainers,
  isSupportedVersion,
  SUPPORTED_VERSIONS,
  type CliVersion,
  type ServiceStatus,
  type ContainerRecord,
} from "./container-output.js";
export { sweepOrphans, type SweepResult } from "./sweep-orphans.js";
export { platformProblem } from "./container-detection.js";
