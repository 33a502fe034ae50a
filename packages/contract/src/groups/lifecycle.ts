import { expect } from "vitest";
import { createSandbox, type CreateSandboxOptions } from "@sbx/core";
import {
  countingProvider,
  delay,
  describeGroup,
  expectSbxError,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** The lifetime `lifecycle.ended-lifetime` asks for: short, and long enough for a loaded machine to create the sandbox. */
export const ENDED_LIFETIME_MS = 5_000;

/** Registers the lifecycle tests: create, kill, idempotent kill, use after kill, `await using`, option validation. */
export function registerLifecycleTests(harness: ContractHarness): void {
  const { contractTest, provider } = harness;

  contractTest("lifecycle.create", "creates a sandbox with an id, the backend name, an absolute workspace and the manifest", async () => {
    await using sandbox = await harness.createSandbox();
    expect(typeof sandbox.id).toBe("string");
    expect(sandbox.id.length).toBeGreaterThan(0);
    expect(sandbox.backend).toBe(provider.backend);
    expect(sandbox.workspace.startsWith("/"), `sandbox.workspace ${JSON.stringify(sandbox.workspace)} is absolute`).toBe(true);
    expect(sandbox.capabilities).toEqual(provider.capabilities);
    expect(sandbox.closed, "sandbox.closed right after create").toBe(false);
    const result = await sandbox.commands.run("echo ready");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("ready\n");
  });

  contractTest("lifecycle.kill", "kill() removes the backend's resource (asked of the backend), closes the sandbox and sets closedAt", async () => {
    const sandboxExists = harness.options.sandboxExists;
    if (!sandboxExists)
      expect.fail(
        "lifecycle.kill needs the sandboxExists(id) option, to ask the backend whether kill() removed the sandbox; wire it, or skip this test with a reason",
      );
    await using sandbox = await harness.createSandbox();
    expect(sandbox.audit().closedAt).toBeNull();
    expect(await sandboxExists(sandbox.id), `the backend reports sandbox ${sandbox.id} exists before kill()`).toBe(true);
    await sandbox.kill();
    expect(sandbox.closed, "sandbox.closed after kill()").toBe(true);
    expect(typeof sandbox.audit().closedAt).toBe("string");
    expect(await sandboxExists(sandbox.id), `the backend reports sandbox ${sandbox.id} exists after kill()`).toBe(false);
  });

  contractTest("lifecycle.kill-twice", "kill() is safe to call twice, also concurrently", async () => {
    await using sandbox = await harness.createSandbox();
    await Promise.all([sandbox.kill(), sandbox.kill()]);
    await sandbox.kill();
    expect(sandbox.closed, "sandbox.closed after kill() twice").toBe(true);
  });

  contractTest("lifecycle.use-after-kill", "commands, files and runCode after kill() raise SBX_SANDBOX_CLOSED", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.kill();
    await expectSbxError(() => sandbox.commands.run("echo late"), "SBX_SANDBOX_CLOSED");
    await expectSbxError(() => sandbox.files.read("anything.txt"), "SBX_SANDBOX_CLOSED");
    await expectSbxError(() => sandbox.files.write("anything.txt", "late"), "SBX_SANDBOX_CLOSED");
    await expectSbxError(() => sandbox.runCode("print(1)"), "SBX_SANDBOX_CLOSED");
  });

  contractTest(
    "lifecycle.ended-killed",
    "sandbox.ended is pending while the sandbox is open and resolves with reason killed after kill()",
    async () => {
      const sandbox = await harness.createSandbox();
      const before = await Promise.race([sandbox.ended.then((end) => end.reason), delay(200).then(() => "pending")]);
      expect(before, "sandbox.ended while the sandbox is open").toBe("pending");
      await sandbox.kill();
      const end = await sandbox.ended;
      expect(end.reason).toBe("killed");
      expect(Number.isNaN(Date.parse(end.endedAt)), `endedAt ${end.endedAt} is an ISO time`).toBe(false);
      expect(sandbox.closed).toBe(true);
    },
  );

  contractTest(
    "lifecycle.ended-lifetime",
    "when the lifetime ends, closed is true and ended resolves with reason lifetime without any call; later calls raise SBX_SANDBOX_NOT_FOUND",
    async () => {
      const sandbox = await harness.createSandbox({ timeoutMs: ENDED_LIFETIME_MS });
      expect(sandbox.closed, "sandbox.closed right after create").toBe(false);
      const end = await Promise.race([sandbox.ended, delay(ENDED_LIFETIME_MS + 20_000).then(() => undefined)]);
      expect(end?.reason, "sandbox.ended after the lifetime (undefined: it never resolved)").toBe("lifetime");
      expect(sandbox.closed, "sandbox.closed once the lifetime ended, before any call").toBe(true);
      await expectSbxError(() => sandbox.commands.run("echo after"), "SBX_SANDBOX_NOT_FOUND");
      expect((await sandbox.ended).reason, "a later call does not change the reason").toBe("lifetime");
      await sandbox.kill();
      expect((await sandbox.ended).reason, "kill() after the end does not change the reason").toBe("lifetime");
    },
  );

  contractTest("lifecycle.await-using-disposes", "`await using` kills the sandbox at the end of the block", async () => {
    let escaped: { closed: boolean } | undefined;
    {
      await using sandbox = await harness.createSandbox();
      escaped = sandbox;
      expect(sandbox.closed, "sandbox.closed inside its await using block").toBe(false);
    }
    expect(escaped?.closed, "sandbox.closed after leaving its await using block").toBe(true);
  });

  contractTest(
    "lifecycle.invalid-create-options",
    "invalid create options raise SBX_INVALID_ARGUMENT before the backend is touched: nothing is created",
    async () => {
      const counting = countingProvider(provider);
      const create = (extra: CreateSandboxOptions) => createSandbox(counting.provider, mergeCreateOptions(harness.options.createOptions, extra));
      await expectSbxError(() => create({ timeoutMs: 5 }), "SBX_INVALID_ARGUMENT");
      await expectSbxError(() => create({ network: { egress: "sometimes" as "deny" } }), "SBX_INVALID_ARGUMENT");
      await expectSbxError(() => create({ env: { "1-bad name": "x" } }), "SBX_INVALID_ARGUMENT");
      await expectSbxError(() => create({ unknownOption: true } as never), "SBX_INVALID_ARGUMENT");
      // Secrets too short to redact were once refused after the backend had created the sandbox, which stayed alive.
      await expectSbxError(() => create({ secrets: { SBX_CONTRACT_TOKEN: "true" } }), "SBX_INVALID_ARGUMENT");
      await expectSbxError(() => create({ secrets: { SBX_CONTRACT_TOKEN: "1" } }), "SBX_INVALID_ARGUMENT");
      expect(counting.creates(), "backend creates made by refused createSandbox calls").toBe(0);
      const sandboxExists = harness.options.sandboxExists;
      for (const id of counting.createdIds()) {
        expect(
          sandboxExists ? await sandboxExists(id) : "no sandboxExists option",
          `sandbox ${id} created by a refused createSandbox call still exists`,
        ).toBe(false);
      }
    },
  );
}

/** The lifecycle group on its own. */
export function describeLifecycleContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("lifecycle", name, factory, options, registerLifecycleTests);
}
