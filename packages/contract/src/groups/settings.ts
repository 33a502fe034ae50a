import { createSandbox, type SbxError } from "@sbx/core";
import { expect } from "vitest";
import {
  countingProvider,
  describeGroup,
  expectSbxError,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** A settings key no backend has. */
export const UNKNOWN_SETTING_KEY = "sbxContractUnknownSetting";

/**
 * Registers the settings test (ADR 0029): a `settings` key the provider's `settingsSchema` does not name is refused by
 * core with `InvalidArgumentError` naming the key, before the provider's `create` is called; never ignored.
 */
export function registerSettingsTests(harness: ContractHarness): void {
  const { contractTest, options, provider } = harness;

  contractTest(
    "settings.unknown-key-refused",
    "an unknown settings key is refused (InvalidArgumentError naming it and the known keys) before anything is created",
    async () => {
      const counting = countingProvider(provider);
      const error = await expectSbxError(
        () => createSandbox(counting.provider, mergeCreateOptions(options.createOptions, { settings: { [UNKNOWN_SETTING_KEY]: true } })),
        "SBX_INVALID_ARGUMENT",
      );
      expect((error as SbxError & { field?: string }).field, "the refused field").toBe(`settings.${UNKNOWN_SETTING_KEY}`);
      for (const key of Object.keys(provider.settingsSchema?.shape ?? {}))
        expect(error.message, `the message names the known key ${key}`).toContain(key);
      expect(counting.creates(), "provider.create calls made for the refused options").toBe(0);
    },
  );
}

/** The settings group on its own. */
export function describeSettingsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("settings", name, factory, options, registerSettingsTests);
}
