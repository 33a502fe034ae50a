import { expect } from "vitest";
import { isSbxError } from "@sbx/core";
import {
  delay,
  describeGroup,
  expectCapabilityRefused,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** Registers the lifetime-change tests (`SET_LIFETIME`), or their refusal when it is off (ADR 0050). */
export function registerLifetimeTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  if (!capabilities.SET_LIFETIME) {
    contractTest("lifetime.refused", "sandbox.setLifetime() raises SBX_CAPABILITY_NOT_SUPPORTED when SET_LIFETIME is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.setLifetime({ timeoutMs: 60_000 }), "SET_LIFETIME");
      expect((await sandbox.commands.run("echo still here")).stdout).toBe("still here\n");
    });
    return;
  }

  contractTest(
    "lifetime.extend",
    "setLifetime() moves the end later: the sandbox outlives its first lifetime, and the audit record says so",
    async () => {
      await using sandbox = await harness.createSandbox({ timeoutMs: 4_000 });
      const asked = Date.now();
      const { expiresAt } = await sandbox.setLifetime({ timeoutMs: 60_000 });
      expect(Date.parse(expiresAt)).toBeGreaterThanOrEqual(asked + 59_000);
      expect(Date.parse(expiresAt)).toBeLessThanOrEqual(Date.now() + 61_000);
      // Past the first lifetime (and the backend's grace after it), measured from inside.
      await delay(8_000);
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
      const changes = sandbox.audit().policies.lifetimeChanges;
      expect((changes?.applied as Array<{ expiresAt: string }>).map((change) => change.expiresAt)).toEqual([expiresAt]);
      expect((changes?.requested as Array<{ timeoutMs: number }>).map((change) => change.timeoutMs)).toEqual([60_000]);
    },
  );

  contractTest("lifetime.shorten", "setLifetime() moves the end earlier: the sandbox ends then, and later calls say it is gone", async () => {
    await using sandbox = await harness.createSandbox({ timeoutMs: 600_000 });
    await sandbox.setLifetime({ timeoutMs: 2_000 });
    const giveUpAt = Date.now() + 60_000;
    let error: unknown;
    while (Date.now() < giveUpAt) {
      error = await sandbox.commands.run("echo alive").then(
        () => undefined,
        (caught: unknown) => caught,
      );
      if (error !== undefined) break;
      await delay(500);
    }
    expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND") || isSbxError(error, "SBX_SANDBOX_CLOSED"), String(error)).toBe(true);
  });
}

/** The lifetime-change group on its own. */
export function describeLifetimeContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("lifetime", name, factory, options, registerLifetimeTests);
}
