export { describeSandboxContract } from "./describe-sandbox-contract.js";
export { describeLifecycleContract } from "./groups/lifecycle.js";
export { describeCommandsContract, printBytesCommand } from "./groups/commands.js";
export { describeBackgroundCommandsContract } from "./groups/background.js";
export { describeFilesContract } from "./groups/files.js";
export { describeRunCodeContract, describeCodeContextsContract } from "./groups/run-code.js";
export { describeNetworkContract, defaultProbeCommand } from "./groups/network.js";
export { describeSecretsContract } from "./groups/secrets.js";
export { describeCredentialsContract } from "./groups/credentials.js";
export { describeAuditContract } from "./groups/audit.js";
export { describeMountsContract, describeLimitsContract, describeReconnectContract } from "./groups/policies.js";
export { describeConcurrencyContract } from "./groups/concurrency.js";
export { describeCapabilityManifestContract } from "./groups/manifest.js";
export { CONTRACT_TEST_IDS, type ContractTestId } from "./test-ids.js";
export { requiredBackends, type NetworkFixture, type SandboxContractOptions, type SandboxProviderFactoryForContract } from "./harness.js";
/** zod schema of the audit record every backend must produce (defined in `@sbx/core`, next to the `AuditRecord` type). */
export { auditRecordSchema } from "@sbx/core";
