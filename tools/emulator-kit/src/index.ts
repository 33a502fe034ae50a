/**
 * What the E2B and Modal emulators share (test infrastructure, not published): streaming Docker execs, iptables
 * egress rules keyed on a container's address, the Docker resources of one emulator instance with their cleanup, and
 * starting a sandbox's container with its deadline PID 1.
 * Test gating lives in `@sbx/emulator-kit/testing` (it imports vitest).
 */
export {
  runExec,
  startExec,
  toEnvironmentList,
  type CollectedExec,
  type ExecOptions,
  type ExecOutputHandlers,
  type RunningExec,
} from "./docker-exec.js";
export {
  ALL_TRAFFIC,
  describeFirewallRule,
  installFirewallRules,
  isIPv4Cidr,
  removeFirewallRules,
  type FirewallRule,
  type OutboundRules,
} from "./firewall-rules.js";
export {
  cleanUpOnProcessExit,
  removeLabelledContainers,
  removeSynchronously,
  requireLocalImage,
  useOrCreateNetwork,
  type EmulatorNetwork,
  type SynchronousCleanup,
} from "./emulator-resources.js";
export { sessionHasProcesses } from "./session-processes.js";
export { WarmContainerPool, type WarmContainerPoolOptions } from "./warm-containers.js";
export {
  deadlineCommand,
  emulatorLabels,
  startPreparedContainer,
  writeDeadline,
  type PreparedContainer,
  type SandboxContainerShape,
  type StartContainerOptions,
} from "./sandbox-container.js";
