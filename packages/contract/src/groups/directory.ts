import { randomUUID } from "node:crypto";
import { getOrCreateSandbox, listSandboxes } from "@sbx/core";
import { expect } from "vitest";
import {
  describeGroup,
  expectCapabilityRefused,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** Registers the listing tests (`LIST_SANDBOXES`), or their refusal when it is off (ADR 0050). */
export function registerListingTests(harness: ContractHarness): void {
  const { contractTest, capabilities, provider } = harness;

  if (!capabilities.LIST_SANDBOXES) {
    contractTest("listing.refused", "listSandboxes() raises SBX_CAPABILITY_NOT_SUPPORTED when LIST_SANDBOXES is off", async () => {
      await expectCapabilityRefused(harness, () => listSandboxes(provider, { labels: { run: "any" } }), "LIST_SANDBOXES");
      expect(provider.list).toBeUndefined();
    });
    return;
  }

  contractTest(
    "listing.by-labels",
    "listSandboxes() returns the sandboxes carrying every label given, with id, labels, created time and state",
    async () => {
      const run = randomUUID();
      const before = Date.now() - 2_000;
      await using first = await harness.createSandbox({ metadata: { "contract-run": run, role: "first" } });
      await using second = await harness.createSandbox({ metadata: { "contract-run": run, role: "second" } });
      const both = await listSandboxes(provider, { labels: { "contract-run": run } });
      expect(both.map((entry) => entry.id).sort()).toEqual([first.id, second.id].sort());
      for (const entry of both) {
        expect(entry.state).toBe("running");
        expect(entry.name).toBeNull();
        expect(Date.parse(entry.createdAt)).toBeGreaterThanOrEqual(before - 1_000);
        expect(entry.labels["contract-run"]).toBe(run);
      }
      const onlyFirst = await listSandboxes(provider, { labels: { "contract-run": run, role: "first" } });
      expect(onlyFirst.map((entry) => [entry.id, entry.labels.role])).toEqual([[first.id, "first"]]);
      await first.kill();
      const afterKill = await listSandboxes(provider, { labels: { "contract-run": run } });
      expect(afterKill.filter((entry) => entry.state === "running").map((entry) => entry.id)).toEqual([second.id]);
    },
  );
}

/** Registers the named-sandbox tests (`NAMED_SANDBOXES`), or their refusal when it is off (ADR 0050). */
export function registerNamedSandboxTests(harness: ContractHarness): void {
  const { contractTest, capabilities, provider, options } = harness;

  if (!capabilities.NAMED_SANDBOXES) {
    contractTest("named.refused", "getOrCreateSandbox() raises SBX_CAPABILITY_NOT_SUPPORTED when NAMED_SANDBOXES is off", async () => {
      await expectCapabilityRefused(
        harness,
        () => getOrCreateSandbox(provider, { ...options.createOptions, name: "sbx-contract-any" }),
        "NAMED_SANDBOXES",
      );
      expect(provider.getOrCreate).toBeUndefined();
    });
    return;
  }

  contractTest(
    "named.exactly-one-creates",
    "three getOrCreateSandbox() calls racing for one name: exactly one creates, all get the same sandbox",
    async () => {
      const name = `contract-${randomUUID().slice(0, 12)}`;
      const results = await Promise.all(
        [1, 2, 3].map(() => getOrCreateSandbox(provider, { ...mergeCreateOptions(options.createOptions, {}), name })),
      );
      try {
        expect(results.filter((result) => result.created).length).toBe(1);
        expect(new Set(results.map((result) => result.sandbox.id)).size).toBe(1);
        const creator = results.find((result) => result.created)!.sandbox;
        const other = results.find((result) => !result.created)!.sandbox;
        await creator.files.write("written-by-creator.txt", "one sandbox");
        expect((await other.commands.run("cat written-by-creator.txt")).stdout).toBe("one sandbox");
        const listed = capabilities.LIST_SANDBOXES ? await listSandboxes(provider) : [];
        if (capabilities.LIST_SANDBOXES) expect(listed.find((entry) => entry.id === creator.id)?.name).toBe(name);
      } finally {
        await results.find((result) => result.created)?.sandbox.kill();
      }
    },
  );
}

/** The listing group on its own. */
export function describeListingContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("listing", name, factory, options, registerListingTests);
}

/** The named-sandbox group on its own. */
export function describeNamedSandboxesContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("named sandboxes", name, factory, options, registerNamedSandboxTests);
}
