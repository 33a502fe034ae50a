/**
 * `@sbx/core/adapter`: what an adapter author needs to write a `SandboxProviderV1` and its driver, and nothing else
 * (ADR 0040): the driver spec, the capability manifest and the backend registry, the sandbox built from a driver, and
 * the shared helpers adapters use (POSIX file operations, process-tree kill scripts, the code agent, bounded waits,
 * the allowlist grammar, settings validation, redaction). Application code uses the root export `@sbx/core`; errors,
 * options and results are there (adapters import those from the root too). Everything here follows the same semver
 * as the root export (docs/writing-an-adapter.md).
 */
export type {
  SandboxProviderV1,
  BackendStatus,
  ProviderCreateRequest,
  DriverAudit,
  SpawnRequest,
  SpawnedProcess,
  CodeRequest,
  DriverExecution,
  SandboxDriverV1,
  ProbeAnswer,
  DriverAgentEnforcement,
  DriverCodeAgent,
  WatchFilesRequest,
  DriverFileWatch,
  TerminalRequest,
  DriverTerminal,
  PortConnectionRequest,
  DriverPortConnection,
} from "./v1/provider.js";
export type { ResolvedCreateOptions } from "./v1/options.js";
export { defineCapabilities, narrowCapabilities } from "./v1/capabilities.js";
export {
  registerBackendManifest,
  listBackendManifests,
  getBackendManifest,
  backendsSupporting,
  firstPartyManifests,
  type BackendManifest,
} from "./backends/backend-registry.js";
export { createSandboxFromDriver } from "./sandbox/create-sandbox-from-driver.js";
export type { SandboxContext } from "./sandbox/sandbox-context.js";
/** Runs Python code as one process per call (a driver without a code agent); kept for `bench/agent-bench.mjs`, which compares it with the agent. */
export { runPythonOneShot } from "./sandbox/python-one-shot.js";
export { throwIfAborted } from "./security/guard.js";
export { ResultCollector, type ResultCaps } from "./limits/execution-limits.js";
/** Validates a value against a zod schema and throws `InvalidArgumentError` naming the field, as core does for options. */
export { validate } from "./security/validate.js";
export { withinTime } from "./limits/deadline.js";
export { redactValue, REDACTED } from "./security/redaction.js";
export { nativeHandleOf } from "./sandbox/native-handle.js";
export { withCodeAgent, type SandboxDriverWithAgent, type CodeAgentOptions } from "./agent/code-agent.js";
export type { SandboxAgentClientOptions, AgentRunOptions, AgentCommandEnforcement } from "./agent/agent-client.js";
export { shellQuote } from "./posix/shell-quote.js";
export { helperEnvironment } from "./posix/posix-command.js";
export { probeAnswerSchema } from "./v1/provider.js";
export { PROBE_TIMEOUT_MS } from "./channel/loss-probe.js";
export {
  posixFileOperations,
  posixFileOperationsOver,
  posixReadFile,
  type PosixFileOperations,
  type PosixScriptTransport,
  type PosixScriptRequest,
  type PosixReadStart,
  type SpawningDriver,
} from "./posix/posix-files.js";
export { COMMAND_WRAPPER, KILL_TREE_SCRIPT, KILL_USER_SCRIPT, newCommandTag } from "./posix/process-tree-kill.js";
export { OUT_OF_MEMORY_PROBE_SCRIPT, parseOutOfMemoryKills, createOutOfMemoryProbe, commandOutOfMemoryReport } from "./posix/out-of-memory-probe.js";
export { commandExitOutcome, SIGKILL_EXIT_CODE, LOST_SANDBOX_CHECKS, type CommandExitFacts, type CommandExit } from "./posix/command-exit-outcome.js";
export { KILL_PROCESS_TREE_SCRIPT } from "./posix/descendant-tree-kill.js";
export { createKillBatcher } from "./posix/kill-batch.js";
/** Whether a pid is a live process on this machine (an adapter sweeping what dead sbx processes left behind). */
export { processIsAlive } from "./credentials/credential-store.js";
export { parseAllowlistHost, type AllowlistHost, type AllowlistHostRules } from "./security/allowlist-host.js";
export {
  compileAllowlist,
  parseAllowlistEntry,
  normalizeHost,
  type Allowlist,
  type AllowlistEntry,
  type AllowlistEntryOrigin,
  type CompileAllowlistOptions,
} from "./security/network-allowlist.js";
export { onlyStandardDescriptors } from "./posix/standard-descriptors-only.js";
