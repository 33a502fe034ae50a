import { randomUUID } from "node:crypto";
import {
  auditRecordSchema,
  credential,
  isSbxError,
  revokeOrphanedCredentials,
  type CredentialEvent,
  type CredentialRevokeRequest,
  type CredentialSourceInput,
  type Sandbox,
} from "@sbx/core";
import { expect } from "vitest";
import {
  delay,
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

const NAME = "SBX_CONTRACT_TOKEN";

/**
 * A credential source backed by a map in the test: issues a fresh random token per sandbox, records every issue
 * and revoke. Each call makes a new source id, so parallel suites never touch each other's durable records.
 */
function recordingSource(overrides: Partial<CredentialSourceInput> = {}) {
  const issued: Array<{ sandboxId: string; name: string; value: string }> = [];
  const revoked: CredentialRevokeRequest[] = [];
  const events: CredentialEvent[] = [];
  const source = credential({
    id: `sbx-contract-${randomUUID()}`,
    retryDelayMs: 1,
    issue: ({ sandboxId, name }) => {
      const value = `sbx-token-${randomUUID()}`;
      issued.push({ sandboxId, name, value });
      return { value, handle: `handle-${sandboxId}` };
    },
    revoke: (request) => void revoked.push(request),
    onEvent: (event) => void events.push(event),
    ...overrides,
  });
  return { source, issued, revoked, events };
}

/** Waits until `condition` holds, up to `limitMs` (never asserts speed: the limit only bounds a hung test). */
async function eventually(condition: () => boolean, limitMs: number): Promise<boolean> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) return false;
    await delay(50);
  }
  return true;
}

/** Registers the scoped-credential tests: issued once per sandbox, revoked exactly once however it ends, failures reported. */
export function registerCredentialsTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  contractTest(
    "credentials.issue-once",
    "a credential is issued once for the new sandbox, reaches commands and code as a secret, and the audit lists it by name only",
    async () => {
      const token = recordingSource();
      await using sandbox = await harness.createSandbox({ secrets: { [NAME]: token.source } });
      expect(token.issued).toEqual([{ sandboxId: sandbox.id, name: NAME, value: expect.stringMatching(/^sbx-token-/) }]);
      const value = token.issued[0]!.value;
      expect((await sandbox.commands.run(`printf '%s' "$${NAME}"`)).stdout).toBe(value);
      if (capabilities.languages.includes("python")) {
        expect((await sandbox.runCode(`import os\nprint(os.environ["${NAME}"])`)).stdout).toBe(`${value}\n`);
      }
      // Still once after use: issuing is per sandbox, not per command.
      expect(token.issued).toHaveLength(1);
      const audit = auditRecordSchema.parse(sandbox.audit());
      expect(JSON.stringify(audit)).not.toContain(value);
      expect(audit.environment.secrets).toContain(NAME);
      expect(audit.credentials).toEqual([
        {
          name: NAME,
          source: token.source.id,
          issuedAt: expect.any(String),
          expiresAt: null,
          revokedAt: null,
          endReason: null,
          outcome: "active",
          revokeAttempts: 0,
          error: null,
        },
      ]);
      expect(token.revoked).toEqual([]);
    },
  );

  contractTest("credentials.revoke-on-kill", "kill() revokes the credential exactly once, with its value, and the audit records it", async () => {
    const token = recordingSource();
    const sandbox = await harness.createSandbox({ secrets: { [NAME]: token.source } });
    await sandbox.kill();
    await sandbox.kill();
    expect(token.revoked).toEqual([
      {
        sandboxId: sandbox.id,
        name: NAME,
        value: token.issued[0]!.value,
        handle: `handle-${sandbox.id}`,
        reason: "kill",
        signal: expect.any(AbortSignal),
      },
    ]);
    const entry = auditRecordSchema.parse(sandbox.audit()).credentials![0]!;
    expect(entry).toMatchObject({ name: NAME, outcome: "revoked", endReason: "kill", revokeAttempts: 1, error: null });
    expect(JSON.stringify(sandbox.audit())).not.toContain(token.issued[0]!.value);
  });

  contractTest("credentials.revoke-on-dispose", "`await using` disposal revokes the credential exactly once", async () => {
    const token = recordingSource();
    let sandboxId: string;
    {
      await using sandbox = await harness.createSandbox({ secrets: { [NAME]: token.source } });
      sandboxId = sandbox.id;
      expect(token.revoked).toEqual([]);
    }
    expect(token.revoked.map((request) => [request.sandboxId, request.reason])).toEqual([[sandboxId, "kill"]]);
  });

  contractTest(
    "credentials.revoke-on-lifetime",
    "the end of the sandbox's lifetime revokes the credential exactly once, without kill()",
    async () => {
      const token = recordingSource();
      const sandbox = await harness.createSandbox({ secrets: { [NAME]: token.source }, timeoutMs: 2_000 });
      try {
        expect(
          await eventually(() => token.revoked.length > 0, 30_000),
          `the token service saw a revocation within 30 s of the lifetime end (revoked: ${JSON.stringify(token.revoked)})`,
        ).toBe(true);
        expect(token.revoked.map((request) => [request.sandboxId, request.reason])).toEqual([[sandbox.id, "lifetime"]]);
        expect(
          await eventually(() => sandbox.audit().credentials![0]!.outcome === "revoked", 10_000),
          `the audit record says the credential was revoked (credentials: ${JSON.stringify(sandbox.audit().credentials)})`,
        ).toBe(true);
      } finally {
        await sandbox.kill();
      }
      expect(token.revoked).toHaveLength(1);
      expect(sandbox.audit().credentials![0]).toMatchObject({ outcome: "revoked", endReason: "lifetime" });
    },
  );

  contractTest(
    "credentials.revoke-on-lost",
    "a sandbox removed out of band (lost) has its credential revoked exactly once, at the first call that finds it gone",
    async (context) => {
      // The hook is the lost-sandbox group's (`removeOutOfBand` in the contract options); read loosely so this group does not depend on it.
      const removeOutOfBand = (harness.options as { removeOutOfBand?: (sandbox: Sandbox) => Promise<void> }).removeOutOfBand;
      if (!removeOutOfBand)
        return context.skip("no removeOutOfBand hook in the contract options; the lost case is covered by @sbx/core's unit tests");
      const token = recordingSource();
      const sandbox = await harness.createSandbox({ secrets: { [NAME]: token.source } });
      try {
        await removeOutOfBand(sandbox);
        const error = await sandbox.commands.run("echo still-there").then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND"), `the call after the loss raised SBX_SANDBOX_NOT_FOUND (got ${String(error)})`).toBe(true);
        expect(
          await eventually(() => token.revoked.length > 0, 30_000),
          `the token service saw a revocation within 30 s of the loss (revoked: ${JSON.stringify(token.revoked)})`,
        ).toBe(true);
        expect(token.revoked.map((request) => [request.sandboxId, request.reason])).toEqual([[sandbox.id, "lost"]]);
        await sandbox.kill();
        expect(token.revoked).toHaveLength(1);
        expect(sandbox.audit().credentials![0]).toMatchObject({ outcome: "revoked", endReason: "lost" });
      } finally {
        // A failed assertion must not leave a live credential (and its record) behind.
        if (!sandbox.closed) await sandbox.kill().catch(() => {});
      }
    },
  );

  contractTest(
    "credentials.revoke-failure-reported",
    "a revocation that keeps failing is retried a bounded number of times, then kill() rejects with SBX_CREDENTIAL_REVOCATION and a later run revokes it",
    async () => {
      let attempts = 0;
      const token = recordingSource({
        revokeAttempts: 2,
        revoke: ({ value }) => {
          attempts++;
          throw new Error(`token service unavailable while revoking ${value}`);
        },
      });
      // A working source with the same id: what a later run would pass to revokeOrphanedCredentials.
      const recovered: CredentialRevokeRequest[] = [];
      const working = credential({ id: token.source.id, issue: () => "unused", revoke: (request) => void recovered.push(request) });
      const sandbox = await harness.createSandbox({ secrets: { [NAME]: token.source } });
      try {
        const value = token.issued[0]!.value;
        const error = await expectSbxError(() => sandbox.kill(), "SBX_CREDENTIAL_REVOCATION");
        expect(sandbox.closed, "sandbox.closed after a kill() whose revocation failed").toBe(true);
        expect(attempts).toBe(2);
        expect((error as unknown as { failures: unknown[] }).failures).toEqual([
          { secretName: NAME, sourceId: token.source.id, attempts: 2, message: "token service unavailable while revoking [redacted]" },
        ]);
        expect(error.message).not.toContain(value);
        expect(token.events.map((event) => event.type)).toEqual(["issued", "revoke-attempt-failed", "revoke-failed"]);
        expect(sandbox.audit().credentials![0]).toMatchObject({ outcome: "revoke-failed", revokeAttempts: 2, revokedAt: null });
        expect(JSON.stringify(sandbox.audit())).not.toContain(value);

        // The durable record was kept: a later run with a working source of the same id revokes it, once.
        const result = await revokeOrphanedCredentials({ sources: [working] });
        expect(result.revoked.map((entry) => [entry.sandboxId, entry.name])).toEqual([[sandbox.id, NAME]]);
        expect(recovered.map((request) => [request.sandboxId, request.reason])).toEqual([[sandbox.id, "orphaned"]]);
        expect((await revokeOrphanedCredentials({ sources: [working] })).revoked).toEqual([]);
      } finally {
        // A failed assertion must not leave the record behind in the state folder.
        if (!sandbox.closed) await sandbox.kill().catch(() => {});
        await revokeOrphanedCredentials({ sources: [working] }).catch(() => {});
      }
    },
  );
}

/** The credentials group on its own. */
export function describeCredentialsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("credentials", name, factory, options, registerCredentialsTests);
}
