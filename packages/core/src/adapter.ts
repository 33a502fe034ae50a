/**
 * `@sbx/core/adapter`: helpers for people writing an sbx adapter (a `SandboxProviderV1` and its driver).
 * Application code does not need these; it uses the root export `@sbx/core`. Everything here follows the
 * same semver as the root export, but is documented for adapter authors only (docs/writing-an-adapter.md).
 */
export { createSandboxFromDriver, type SandboxContext } from "./runtime/create-sandbox-from-driver.js";
export { resolveWorkspacePath, resolveWorkingDirectory } from "./runtime/paths.js";
export { OutputCollector, TextChannel, DEFAULT_OUTPUT_LIMIT_BYTES } from "./runtime/output-collector.js";
export { runPythonOneShot, PYTHON_ONE_SHOT_WRAPPER } from "./runtime/python-one-shot.js";
export { redactText, throwIfAborted } from "./runtime/guard.js";
/** Validates a value against a zod schema and throws `InvalidArgumentError` naming the field, as core does for options. */
export { validate } from "./runtime/validate.js";
export { redactValue, secretForms, MIN_SECRET_LENGTH, REDACTED } from "./runtime/redaction.js";
export { nativeHandleOf } from "./runtime/native-handle.js";
export { withCodeAgent, type SandboxDriverWithAgent, type CodeAgentOptions } from "./agent/code-agent.js";
export { probeAnswerSchema } from "./v1/provider.js";
export { PROBE_TIMEOUT_MS } from "./channel/loss-probe.js";
export { SandboxAgentClient, type SandboxAgentClientOptions, type AgentRunOptions, type AgentCommandEnforcement } from "./agent/agent-client.js";
export { SBX_AGENT_SOURCE, SBX_AGENT_PROTOCOL, agentCommandLine } from "./agent/agent-source.js";
export { encodeAgentFrame, AgentFrameDecoder, AgentProtocolViolation, MAX_AGENT_FRAME_BYTES, type AgentFrame } from "./agent/agent-frames.js";
export { withDriverDefaults, type CompleteDriver } from "./runtime/driver-defaults.js";
export { defaultEnvironment } from "./runtime/default-environment.js";
export { shellQuote, shellScript } from "./posix/shell-quote.js";
export { concatenateBytes } from "./posix/concatenate-bytes.js";
export { runPosixScript, feedStdin, helperEnvironment, DEFAULT_PATH, type PosixCommandResult } from "./posix/posix-command.js";
export {
  posixFileOperations,
  posixFileOperationsOver,
  posixReadFile,
  checkPosixFileResult,
  sortEntries,
  type PosixFileOperations,
  type PosixScriptTransport,
  type PosixScriptRequest,
  type PosixReadStart,
  type SpawningDriver,
} from "./posix/posix-files.js";
export * from "./posix/posix-file-scripts.js";
export { COMMAND_WRAPPER, KILL_TREE_SCRIPT, KILL_USER_SCRIPT, newCommandTag } from "./posix/process-tree-kill.js";
export { OUT_OF_MEMORY_PROBE_SCRIPT, parseOutOfMemoryKills, createOutOfMemoryProbe, commandOutOfMemoryReport } from "./posix/out-of-memory-probe.js";
export { KILL_PROCESS_TREE_SCRIPT } from "./posix/descendant-tree-kill.js";
/** Whether a pid is a live process on this machine (an adapter sweeping what dead sbx processes left behind). */
export { processIsAlive } from "./runtime/credential-store.js";
export { parseAllowlistHost, type AllowlistHost, type AllowlistHostRules } from "./runtime/allowlist-host.js";
export { CAPABILITY_METHOD_PAIRS, type CapabilityMethodPair } from "./v1/capability-methods.js";
export { onlyStandardDescriptors, CLOSE_INHERITED_DESCRIPTORS_SCRIPT } from "./posix/standard-descriptors-only.js";
