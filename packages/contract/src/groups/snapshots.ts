import { randomUUID } from "node:crypto";
import { deleteSnapshot, forkSandbox, isSbxError, listSandboxes, listSnapshots, type Sandbox, type SandboxSnapshot } from "@sbx/core";
import { expect } from "vitest";
import {
  delay,
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** A snapshot id no backend makes, for the refusal test. */
const UNKNOWN_SNAPSHOT = "sbx-contract-no-such-snapshot";

/**
 * Deletes a snapshot the test took. A backend may hold on to it for a moment after the last sandbox made from it was
 * killed (Docker removes such a container asynchronously), so a refusal is retried for up to 20 s; returns the answer.
 */
async function deleteWhenFree(harness: ContractHarness, id: string): Promise<boolean> {
  let last: unknown;
  for (let attempt = 0; attempt < 80; attempt++) {
    try {
      return await deleteSnapshot(harness.provider, id);
    } catch (error) {
      last = error;
      if (!isSbxError(error, "SBX_INVALID_ARGUMENT")) throw error;
      await delay(250);
    }
  }
  throw last;
}

/** Writes the files every snapshot test checks: text in a nested folder, bytes, and a link inside the workspace. */
async function writeSampleFiles(sandbox: Sandbox, marker: string): Promise<void> {
  await sandbox.files.write("kept/deep/notes.txt", `notes ${marker}`);
  await sandbox.files.write("kept/bytes.bin", new Uint8Array([0, 1, 2, 255, 254]));
  await sandbox.commands.run("ln -s deep/notes.txt kept/link-to-notes");
}

/** Asserts `sandbox` holds the sample files written with `marker`, measured from inside (commands) and through the files API. */
async function expectSampleFiles(sandbox: Sandbox, marker: string): Promise<void> {
  expect(await sandbox.files.read("kept/deep/notes.txt")).toBe(`notes ${marker}`);
  expect([...(await sandbox.files.read("kept/bytes.bin", { format: "bytes" }))]).toEqual([0, 1, 2, 255, 254]);
  expect((await sandbox.files.stat("kept/link-to-notes")).type).toBe("symlink");
  expect((await sandbox.commands.run("cat kept/link-to-notes")).stdout).toBe(`notes ${marker}`);
}

/** Registers the snapshot tests (`SNAPSHOTS`), or their refusal when it is off (ADR 0056). */
export function registerSnapshotTests(harness: ContractHarness): void {
  const { contractTest, capabilities, provider, options } = harness;

  if (!capabilities.SNAPSHOTS) {
    contractTest(
      "snapshots.refused",
      "snapshot(), createSandbox({ fromSnapshot }), forkSandbox, listSnapshots and deleteSnapshot raise SBX_CAPABILITY_NOT_SUPPORTED when SNAPSHOTS is off",
      async () => {
        await using sandbox = await harness.createSandbox();
        await expectCapabilityRefused(harness, () => sandbox.snapshot(), "SNAPSHOTS");
        await expectCapabilityRefused(harness, () => forkSandbox(sandbox, { count: 1 }), "SNAPSHOTS");
        await expectCapabilityRefused(harness, () => harness.createSandbox({ fromSnapshot: UNKNOWN_SNAPSHOT }), "SNAPSHOTS");
        await expectCapabilityRefused(harness, () => listSnapshots(provider), "SNAPSHOTS");
        await expectCapabilityRefused(harness, () => deleteSnapshot(provider, UNKNOWN_SNAPSHOT), "SNAPSHOTS");
        expect(provider.listSnapshots).toBeUndefined();
        expect(provider.deleteSnapshot).toBeUndefined();
        expect((await sandbox.commands.run("echo still here")).stdout).toBe("still here\n");
      },
    );
    return;
  }

  contractTest(
    "snapshots.files-restored",
    "a sandbox created from a snapshot has the workspace's files, folders and links; the two then change independently",
    async () => {
      const marker = randomUUID();
      await using source = await harness.createSandbox();
      await writeSampleFiles(source, marker);
      const snapshot = await source.snapshot();
      try {
        expect(snapshot.backend).toBe(provider.backend);
        expect(Date.parse(snapshot.createdAt)).toBeGreaterThan(Date.now() - 600_000);
        // Written after the snapshot: not in it.
        await source.files.write("after-snapshot.txt", "later");
        await using copy = await harness.createSandbox({ fromSnapshot: snapshot.id });
        expect(copy.id).not.toBe(source.id);
        await expectSampleFiles(copy, marker);
        expect(await copy.files.exists("after-snapshot.txt")).toBe(false);
        await copy.files.write("kept/deep/notes.txt", "changed in the copy");
        expect(await source.files.read("kept/deep/notes.txt")).toBe(`notes ${marker}`);
        await copy.kill();
      } finally {
        await deleteWhenFree(harness, snapshot.id);
      }
    },
  );

  contractTest(
    "snapshots.policies-afresh",
    "a snapshot carries files only: secrets, environment, labels and egress of the snapshotted sandbox do not reach a sandbox created from it",
    async () => {
      const secret = `sbx-snapshot-secret-${randomUUID()}`;
      await using source = await harness.createSandbox({
        secrets: { SNAPSHOT_SECRET: secret },
        env: { SNAPSHOT_ENV: "from-source" },
        metadata: { "snapshot-origin": "source" },
        network: { egress: "allow" },
      });
      await source.files.write("marker.txt", "files only");
      // A process holding the secret in its environment, running while the snapshot is taken.
      const holder = capabilities.BACKGROUND_COMMANDS ? await source.commands.start("sleep 120") : undefined;
      const snapshot = await source.snapshot();
      try {
        await holder?.kill();
        await using copy = await harness.createSandbox({ fromSnapshot: snapshot.id });
        expect(await copy.files.read("marker.txt")).toBe("files only");
        const seen = await copy.commands.run('printf "%s|%s" "${SNAPSHOT_SECRET:-unset}" "${SNAPSHOT_ENV:-unset}"');
        expect(seen.stdout).toBe("unset|unset");
        const audit = copy.audit();
        expect(audit.environment.secrets).not.toContain("SNAPSHOT_SECRET");
        expect(audit.environment.variables).not.toContain("SNAPSHOT_ENV");
        if (capabilities.LIST_SANDBOXES) {
          const labelled = await listSandboxes(provider, { labels: { "snapshot-origin": "source" } });
          expect(labelled.map((entry) => entry.id)).toEqual([source.id]);
        }
        expect((audit.policies.network.requested as { egress: string }).egress).toBe("deny");
        expect(JSON.stringify(audit)).not.toContain(secret);
        await copy.kill();
      } finally {
        await deleteWhenFree(harness, snapshot.id);
      }
    },
  );

  contractTest(
    "snapshots.list-and-delete",
    "listSnapshots() lists a snapshot until deleteSnapshot() removes it; a deleted or unknown snapshot is refused at create",
    async () => {
      await using source = await harness.createSandbox();
      await source.files.write("listed.txt", "x");
      const snapshot: SandboxSnapshot = await source.snapshot();
      let deleted = false;
      try {
        const listed = await listSnapshots(provider);
        expect(listed.find((entry) => entry.id === snapshot.id)).toEqual(snapshot);
        expect(await deleteWhenFree(harness, snapshot.id)).toBe(true);
        deleted = true;
        expect(await deleteSnapshot(provider, snapshot.id)).toBe(false);
        expect((await listSnapshots(provider)).map((entry) => entry.id)).not.toContain(snapshot.id);
        await expectSbxError(() => harness.createSandbox({ fromSnapshot: snapshot.id }), "SBX_INVALID_ARGUMENT");
        await expectSbxError(() => harness.createSandbox({ fromSnapshot: UNKNOWN_SNAPSHOT }), "SBX_INVALID_ARGUMENT");
      } finally {
        if (!deleted) await deleteWhenFree(harness, snapshot.id);
      }
    },
  );

  contractTest("snapshots.fork", "forkSandbox({ count: 2 }) gives two new sandboxes with the forked sandbox's files, each its own", async () => {
    const marker = randomUUID();
    await using source = await harness.createSandbox();
    await writeSampleFiles(source, marker);
    const { snapshot, sandboxes } = await forkSandbox(source, { count: 2, createOptions: mergeCreateOptions(options.createOptions, {}) });
    try {
      expect(sandboxes.length).toBe(2);
      expect(new Set([source.id, ...sandboxes.map((sandbox) => sandbox.id)]).size).toBe(3);
      for (const sandbox of sandboxes) await expectSampleFiles(sandbox, marker);
      await sandboxes[0]!.files.write("only-in-first.txt", "first");
      expect(await sandboxes[1]!.files.exists("only-in-first.txt")).toBe(false);
    } finally {
      await Promise.all(sandboxes.map((sandbox) => sandbox.kill()));
      await deleteWhenFree(harness, snapshot.id);
    }
  });
}

/** The snapshot group on its own. */
export function describeSnapshotsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("snapshots", name, factory, options, registerSnapshotTests);
}
