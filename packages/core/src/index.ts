/**
 * `@sbx/core`: the user API (create, connect, detect and register backends; options, results and errors).
 * Helpers for adapter authors live on the `@sbx/core/adapter` subpath (see docs/writing-an-adapter.md).
 */
export * from "./errors/index.js";
export { CAPABILITY_NAMES, capabilitiesSchema, type Capabilities, type CapabilityName } from "./v1/capabilities.js";
export {
  networkPolicySchema,
  limitsSchema,
  mountSchema,
  createSandboxOptionsSchema,
  runCommandOptionsSchema,
  runCodeOptionsSchema,
  type NetworkPolicyInput,
  type NetworkPolicy,
  type ResourceLimits,
  type MountInput,
  type Mount,
  type CreateSandboxOptions,
  type CommandDefaults,
} from "./v1/options.js";
export { MAX_INITIAL_FILES, MAX_INITIAL_FILES_BYTES, initialFileSchema, type InitialFile } from "./v1/initial-files.js";
export type * from "./v1/audit.js";
export { auditRecordSchema } from "./v1/audit.js";
export type * from "./v1/sandbox.js";
/** What `createSandbox` accepts besides a target (a provider object) and what `detectBackends` reports. The driver types are on `@sbx/core/adapter`. */
export type { SandboxProviderV1, BackendStatus } from "./v1/provider.js";
export {
  createSandbox,
  connectSandbox,
  detectBackends,
  registerProvider,
  loadProvider,
  checkProvider,
  parseTarget,
  AUTO_PREFERENCE_ORDER,
  BACKENDS_ENVIRONMENT_VARIABLE,
  autoBackendOrder,
  type SandboxProviderFactory,
} from "./backends/resolve-backend.js";
export type { SandboxLogEntry, SandboxLogger } from "./v1/logging.js";
export { DEBUG_ENVIRONMENT_VARIABLE } from "./backends/backend-logging.js";
export { DEFAULT_OUTPUT_LIMIT_BYTES } from "./limits/output-collector.js";
export { truncateUtf8, type TruncateUtf8Options, type Utf8Prefix } from "./text/truncate-utf8.js";
export * from "./v1/credentials.js";
export { credential } from "./credentials/credential.js";
export {
  revokeOrphanedCredentials,
  type RevokeOrphanedCredentialsOptions,
  type RevokeOrphanedCredentialsResult,
  type OrphanedCredential,
  type RefusedCredentialRecord,
} from "./credentials/revoke-orphaned-credentials.js";
export { defaultStateDirectory } from "./credentials/credential-store.js";
export { DEFAULT_READ_LIMIT_BYTES, DEFAULT_DOWNLOAD_LIMIT_BYTES, DEFAULT_FILE_TIMEOUT_MS } from "./limits/file-limits.js";
export { DEFAULT_KILL_GRACE_MS } from "./limits/deadline.js";
export { DEFAULT_MAX_RESULTS } from "./limits/execution-limits.js";
export {
  defineCapabilities,
  type SandboxDriverV1,
  type DriverAudit,
  type SpawnRequest,
  type SpawnedProcess,
  type ResolvedCreateOptions,
} from "./deprecated-root-exports.js";
export { createSandboxPool, SandboxPool } from "./pool/sandbox-pool.js";
export {
  DEFAULT_POOL_MAX_IDLE_MS,
  DEFAULT_POOL_REFILL_CONCURRENCY,
  type SandboxPoolOptions,
  type AcquireSandboxOptions,
  type SandboxPoolStats,
} from "./pool/sandbox-pool-options.js";
export { listSandboxes, getOrCreateSandbox, type ListSandboxesOptions, type GetOrCreateSandboxResult } from "./backends/sandbox-directory.js";
export { listedSandboxSchema, sandboxNameSchema, type ListedSandbox } from "./v1/listing.js";
export {
  listSnapshots,
  deleteSnapshot,
  forkSandbox,
  type SnapshotStoreOptions,
  type ForkSandboxOptions,
  type ForkedSandboxes,
} from "./backends/sandbox-snapshots.js";
export { sandboxSnapshotSchema, snapshotIdSchema, type SandboxSnapshot } from "./v1/snapshots.js";
