import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import {
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

const SECRET_NAME = "SBX_CONTRACT_SECRET";

function everyTextOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    parts.push(current.message, String(current.stack ?? ""));
    current = (current as { cause?: unknown }).cause;
  }
  try {
    parts.push(JSON.stringify(error));
  } catch {
    parts.push("[unserialisable]");
  }
  for (const field of ["partialStdout", "partialStderr"]) parts.push(String((error as Record<string, unknown>)[field] ?? ""));
  return parts.join("\n");
}

/** Registers the secrets tests: usable by commands, never in the audit record or error messages. */
export function registerSecretsTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest("secrets.usable-not-leaked", "a secret reaches commands through env, and the audit record lists its name only", async () => {
    const value = `sbx-secret-${randomUUID()}`;
    await using sandbox = await harness.createSandbox({ secrets: { [SECRET_NAME]: value }, env: { SBX_CONTRACT_PLAIN: "plain" } });
    const result = await sandbox.commands.run(`printf '%s' "$${SECRET_NAME}"`);
    expect(result.stdout).toBe(value);
    const audit = sandbox.audit();
    expect(JSON.stringify(audit)).not.toContain(value);
    expect(audit.environment.secrets).toContain(SECRET_NAME);
    expect(audit.environment.variables).not.toContain(SECRET_NAME);
    await sandbox.kill();
    expect(JSON.stringify(sandbox.audit())).not.toContain(value);
  });

  contractTest("secrets.absent-from-errors", "a secret echoed by a command that times out is absent from the error", async () => {
    const value = `sbx-secret-${randomUUID()}`;
    await using sandbox = await harness.createSandbox({ secrets: { [SECRET_NAME]: value } });
    const error = await expectSbxError(
      () => sandbox.commands.run(`echo "leak: $${SECRET_NAME}"; echo "leak: $${SECRET_NAME}" 1>&2; sleep 30`, { timeoutMs: 1500 }),
      "SBX_TIMEOUT",
    );
    expect(everyTextOf(error)).not.toContain(value);
  });
}

/** The secrets group on its own. */
export function describeSecretsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("secrets", name, factory, options, registerSecretsTests);
}
