import { expect } from "vitest";
import { describeGroup, type ContractHarness, type SandboxContractOptions, type SandboxProviderFactoryForContract } from "../harness.js";

/** Registers the concurrency tests: several sandboxes at once, several commands at once. */
export function registerConcurrencyTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest("concurrency.parallel-sandboxes-isolated", "three sandboxes created in parallel have separate filesystems", async () => {
    const created = await Promise.allSettled([0, 1, 2].map(() => harness.createSandbox()));
    const sandboxes = created.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    try {
      const failed = created.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
      if (failed) throw failed.reason;
      expect(new Set(sandboxes.map((sandbox) => sandbox.id)).size).toBe(3);
      await Promise.all(sandboxes.map((sandbox, index) => sandbox.files.write("who.txt", `sandbox-${index}`)));
      await Promise.all(sandboxes.map((sandbox, index) => sandbox.commands.run(`printf 'only-${index}' > only-${index}.txt`)));
      for (const [index, sandbox] of sandboxes.entries()) {
        expect(await sandbox.files.read("who.txt")).toBe(`sandbox-${index}`);
        for (const other of [0, 1, 2]) expect(await sandbox.files.exists(`only-${other}.txt`)).toBe(other === index);
      }
    } finally {
      await Promise.allSettled(sandboxes.map((sandbox) => sandbox.kill()));
    }
  });

  contractTest("concurrency.parallel-commands", "commands run in parallel in one sandbox each get their own output", async () => {
    await using sandbox = await harness.createSandbox();
    const results = await Promise.all(
      [0, 1, 2, 3].map((index) => sandbox.commands.run(`sleep 0.${index}; echo out-${index}; echo err-${index} 1>&2; exit ${index}`)),
    );
    results.forEach((result, index) => {
      expect(result.stdout).toBe(`out-${index}\n`);
      expect(result.stderr).toBe(`err-${index}\n`);
      expect(result.exitCode).toBe(index);
    });
  });
}

/** The concurrency group on its own. */
export function describeConcurrencyContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("concurrency", name, factory, options, registerConcurrencyTests);
}
