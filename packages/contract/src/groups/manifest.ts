import { capabilitiesSchema } from "@sbx/core";
import { expect } from "vitest";
import { describeGroup, type ContractHarness, type SandboxContractOptions, type SandboxProviderFactoryForContract } from "../harness.js";

/** Registers the first test: the manifest is valid and does not change when a sandbox is created. */
export function registerCapabilityManifestTests(harness: ContractHarness): void {
  const { contractTest, provider } = harness;
  const snapshot = structuredClone({ ...harness.capabilities, languages: [...harness.capabilities.languages] });

  contractTest("manifest.valid-and-stable", "the manifest passes capabilitiesSchema and is unchanged after a create", async () => {
    expect(provider.specificationVersion).toBe("sbx-v1");
    expect(typeof provider.backend).toBe("string");
    expect(provider.backend.length).toBeGreaterThan(0);
    expect(typeof provider.packageName).toBe("string");
    capabilitiesSchema.parse(provider.capabilities);
    expect(provider.connect !== undefined).toBe(provider.capabilities.RECONNECT);
    {
      await using sandbox = await harness.createSandbox();
      expect(sandbox.capabilities).toEqual(snapshot);
    }
    capabilitiesSchema.parse(provider.capabilities);
    expect({ ...provider.capabilities, languages: [...provider.capabilities.languages] }).toEqual(snapshot);
  });
}

/** The capability manifest group on its own. */
export function describeCapabilityManifestContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("capability manifest", name, factory, options, registerCapabilityManifestTests);
}
