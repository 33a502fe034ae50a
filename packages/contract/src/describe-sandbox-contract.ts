import { describe } from "vitest";
import { registerAuditTests } from "./groups/audit.js";
import { registerBackgroundCommandsTests } from "./groups/background.js";
import { registerCommandsTests } from "./groups/commands.js";
import { registerConcurrencyTests } from "./groups/concurrency.js";
import { registerCredentialsTests } from "./groups/credentials.js";
import { registerFilesTests } from "./groups/files.js";
import { registerFileWatchTests } from "./groups/file-watch.js";
import { registerTerminalTests } from "./groups/terminals.js";
import { registerPortsTests } from "./groups/ports.js";
import { registerFilePolicyTests } from "./groups/file-policy.js";
import { registerFileRaceTests } from "./groups/file-races.js";
import { registerInitialFilesTests } from "./groups/initial-files.js";
import { registerLifecycleTests } from "./groups/lifecycle.js";
import { registerCapabilityManifestTests } from "./groups/manifest.js";
import { registerNetworkTests } from "./groups/network.js";
import { registerLimitsTests, registerMountsTests, registerReconnectTests } from "./groups/policies.js";
import { registerCodeContextsTests, registerRunCodeTests } from "./groups/run-code.js";
import { registerSecretsTests } from "./groups/secrets.js";
import { registerLostSandboxTests } from "./groups/lost-sandbox.js";
import { registerOutputCapsTests } from "./groups/output-caps.js";
import { registerReadLimitsTests } from "./groups/read-limits.js";
import { registerSecretEncodingsTests } from "./groups/secret-encodings.js";
import { registerVerifiedKillsTests } from "./groups/verified-kills.js";
import { registerIsolationTests, registerUserTests } from "./groups/isolation.js";
import { registerSettingsTests } from "./groups/settings.js";
import { registerListingTests, registerNamedSandboxTests } from "./groups/directory.js";
import { registerLifetimeTests } from "./groups/lifetime.js";
import { registerPauseTests } from "./groups/pause.js";
import { registerSnapshotTests } from "./groups/snapshots.js";
import { createContractHarness, type SandboxContractOptions, type SandboxProviderFactoryForContract } from "./harness.js";

/**
 * Registers the whole sbx contract suite for one provider, as vitest `describe`/`it` blocks.
 * `factory` is called once, at collection time, to read the capability manifest: it must be synchronous and must
 * not touch the backend. The suite then runs the positive tests for every capability that is on and asserts
 * `CapabilityNotSupportedError` (with the right `supportedBy`) for every one that is off. When `provider.detect()`
 * says the backend is unusable, every test skips with the reason, or fails when `SBX_REQUIRE` names the backend.
 * @example describeSandboxContract("docker", () => createSandboxProvider(), { timeoutMs: 120_000 });
 */
export function describeSandboxContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describe(`sbx contract: ${name}`, () => {
    const harness = createContractHarness(name, factory, options);
    describe("capability manifest", () => registerCapabilityManifestTests(harness));
    describe("lifecycle", () => registerLifecycleTests(harness));
    describe("commands", () => registerCommandsTests(harness));
    describe("background commands", () => registerBackgroundCommandsTests(harness));
    describe("files", () => registerFilesTests(harness));
    describe("file policy", () => registerFilePolicyTests(harness));
    describe("file races and names", () => registerFileRaceTests(harness));
    describe("initial files", () => registerInitialFilesTests(harness));
    describe("file watching", () => registerFileWatchTests(harness));
    describe("terminals", () => registerTerminalTests(harness));
    describe("exposed ports", () => registerPortsTests(harness));
    describe("runCode", () => registerRunCodeTests(harness));
    describe("code contexts", () => registerCodeContextsTests(harness));
    describe("network", () => registerNetworkTests(harness));
    describe("secrets", () => registerSecretsTests(harness));
    describe("credentials", () => registerCredentialsTests(harness));
    describe("audit", () => registerAuditTests(harness));
    describe("mounts", () => registerMountsTests(harness));
    describe("limits", () => registerLimitsTests(harness));
    describe("reconnect", () => registerReconnectTests(harness));
    describe("listing", () => registerListingTests(harness));
    describe("named sandboxes", () => registerNamedSandboxTests(harness));
    describe("lifetime", () => registerLifetimeTests(harness));
    describe("pause", () => registerPauseTests(harness));
    describe("snapshots", () => registerSnapshotTests(harness));
    describe("concurrency", () => registerConcurrencyTests(harness));
    describe("output caps", () => registerOutputCapsTests(harness));
    describe("verified kills", () => registerVerifiedKillsTests(harness));
    describe("read limits", () => registerReadLimitsTests(harness));
    describe("secret encodings", () => registerSecretEncodingsTests(harness));
    describe("lost sandbox", () => registerLostSandboxTests(harness));
    describe("isolation", () => registerIsolationTests(harness));
    describe("user", () => registerUserTests(harness));
    describe("settings", () => registerSettingsTests(harness));
  });
}
