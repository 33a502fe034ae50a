import { auditRecordSchema } from "@sbx/core";
import { expect } from "vitest";
import { describeGroup, type ContractHarness, type SandboxContractOptions, type SandboxProviderFactoryForContract } from "../harness.js";

/** Registers the audit record tests. */
export function registerAuditTests(harness: ContractHarness): void {
  const { contractTest, provider } = harness;

  contractTest("audit.shape", "the audit record passes auditRecordSchema, names this sandbox, and sets closedAt after kill", async () => {
    await using sandbox = await harness.createSandbox();
    const record = auditRecordSchema.parse(sandbox.audit());
    expect(record.backend).toBe(provider.backend);
    expect(record.sandboxId).toBe(sandbox.id);
    expect(record.isolating).toBe(provider.isolating);
    expect(record.closedAt).toBeNull();
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
    await sandbox.kill();
    const closed = auditRecordSchema.parse(sandbox.audit());
    expect(closed.closedAt).not.toBeNull();
    expect(Date.parse(closed.closedAt!)).toBeGreaterThanOrEqual(Date.parse(closed.createdAt));
  });

  contractTest("audit.environment-names", "the audit record lists environment variable names", async () => {
    await using sandbox = await harness.createSandbox({ env: { SBX_CONTRACT_VISIBLE: "value-is-fine-here" } });
    expect(sandbox.audit().environment.variables).toContain("SBX_CONTRACT_VISIBLE");
  });
}

/** The audit group on its own. */
export function describeAuditContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("audit", name, factory, options, registerAuditTests);
}
