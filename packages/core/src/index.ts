export * from "./errors/index.js";
export * from "./v1/capabilities.js";
export * from "./v1/backend-registry.js";
export * from "./v1/options.js";
export type * from "./v1/audit.js";
export { auditRecordSchema } from "./v1/audit.js";
export type * from "./v1/sandbox.js";
export type * from "./v1/provider.js";
export { createSandbox, connectSandbox, detectBackends, registerProvider, loadProvider, checkProvider, parseTarget, AUTO_PREFERENCE_ORDER, type SandboxProviderFactory } from "./runtime/resolve-backend.js";
export { createSandboxFromDriver, type SandboxContext } from "./runtime/create-sandbox-from-driver.js";
export { resolveWorkspacePath, resolveWorkingDirectory } from "./runtime/paths.js";
export { OutputCollector, TextChannel, DEFAULT_OUTPUT_LIMIT_BYTES } from "./runtime/output-collector.js";
export { runPythonOneShot, PYTHON_ONE_SHOT_WRAPPER } from "./runtime/python-one-shot.js";
export { redactText, throwIfAborted } from "./runtime/guard.js";
export { validate } from "./runtime/validate.js";
export * from "./v1/credentials.js";
export { revokeOrphanedCredentials, type RevokeOrphanedCredentialsOptions, type RevokeOrphanedCredentialsResult, type OrphanedCredential } from "./runtime/revoke-orphaned-credentials.js";
export { defaultStateDirectory } from "./runtime/credential-store.js";
/** The zod instance core validates with, so adapters validate their settings the same way without their own copy. */
