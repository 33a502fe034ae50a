/**
 * Core's side of snapshots (ADR 0056): the refusals, the check of a backend's answer, and `forkSandbox`'s all-or-nothing
 * rule, on an in-memory provider. The backends' own behaviour is the contract group `snapshots.*`.
 */
import { describe, expect, it } from "vitest";
import { createSandbox, defineCapabilities, deleteSnapshot, forkSandbox, listSnapshots, type SandboxSnapshot } from "../src/index.js";
import type { SandboxProviderV1 } from "../src/v1/provider.js";
import { caught } from "./support/caught.js";
import { createMemoryProvider, type MemoryDriver } from "./support/memory-driver.js";

/** A memory provider with SNAPSHOTS on: its drivers answer `answer()`, its creates from a snapshot fail from the `failFrom`-th on. */
function snapshottingProvider(options: { answer?: () => unknown; failFrom?: number } = {}) {
  const inner = createMemoryProvider({ backend: "snapshotting" });
  const deleted: string[] = [];
  const fromSnapshot: string[] = [];
  const made: MemoryDriver[] = [];
  const provider: SandboxProviderV1 = {
    ...inner,
    capabilities: defineCapabilities({ BACKGROUND_COMMANDS: true, STDIN: true, SNAPSHOTS: true, languages: ["python"] }),
    async create(request) {
      if (request.options.fromSnapshot !== undefined) {
        fromSnapshot.push(request.options.fromSnapshot);
        if (options.failFrom !== undefined && fromSnapshot.length >= options.failFrom) throw new Error("create from the snapshot failed");
      }
      const driver = (await inner.create(request)) as MemoryDriver;
      made.push(driver);
      const snapshot = async (): Promise<unknown> =>
        options.answer ? options.answer() : { id: "memory-snapshot-1", createdAt: new Date().toISOString(), backend: "snapshotting" };
      // The answer is whatever the test gives, on purpose: core must check it.
      return Object.assign(driver, { snapshot: snapshot as () => Promise<SandboxSnapshot> });
    },
    listSnapshots: async () => [] as SandboxSnapshot[],
    deleteSnapshot: async (request) => {
      deleted.push(request.id);
      return true;
    },
  };
  return { provider, deleted, fromSnapshot, made };
}

describe("snapshots in core", () => {
  it("fromSnapshot on a backend without SNAPSHOTS is refused before anything is created", async () => {
    const provider = createMemoryProvider({ backend: "no-snapshots" });
    const error = await caught(() => createSandbox(provider, { fromSnapshot: "some-snapshot" }));
    expect(error.code).toBe("SBX_CAPABILITY_NOT_SUPPORTED");
    expect(error.capability).toBe("SNAPSHOTS");
    expect(error.supportedBy).toEqual(["docker", "fake", "modal"]);
    expect(provider.drivers.length).toBe(0);
    expect((await caught(() => listSnapshots(provider))).capability).toBe("SNAPSHOTS");
    expect((await caught(() => deleteSnapshot(provider, "some-snapshot"))).capability).toBe("SNAPSHOTS");
  });

  it("a snapshot answer that is malformed or names another backend is a ProviderError, never passed on", async () => {
    for (const answer of [
      { id: "", createdAt: "now", backend: "snapshotting" },
      { id: "x", createdAt: new Date().toISOString(), backend: "other" },
    ]) {
      const { provider } = snapshottingProvider({ answer: () => answer });
      await using sandbox = await createSandbox(provider);
      const error = await caught(() => sandbox.snapshot());
      expect(error.code).toBe("SBX_PROVIDER");
    }
  });

  it("forkSandbox is all or nothing: a failed create kills the copies made, deletes the snapshot and rejects with the failure", async () => {
    const { provider, deleted, fromSnapshot, made } = snapshottingProvider({ failFrom: 3 });
    await using source = await createSandbox(provider);
    const error = await caught(() => forkSandbox(source, { count: 5 }));
    expect(error.message).toContain("create from the snapshot failed");
    expect(fromSnapshot.every((id) => id === "memory-snapshot-1")).toBe(true);
    expect(fromSnapshot.length).toBeGreaterThanOrEqual(3);
    // Every copy that was made is destroyed; the source is not.
    const copies = made.slice(1);
    expect(copies.length).toBe(2);
    expect(copies.every((driver) => driver.destroyCalls === 1)).toBe(true);
    expect(made[0]!.destroyCalls).toBe(0);
    expect(deleted).toEqual(["memory-snapshot-1"]);
  });

  it("forkSandbox gives count sandboxes from one snapshot, and refuses fromSnapshot in createOptions and a count out of range", async () => {
    const { provider, fromSnapshot } = snapshottingProvider();
    await using source = await createSandbox(provider);
    const { snapshot, sandboxes } = await forkSandbox(source, { count: 3, createOptions: { metadata: { fork: "yes" } } });
    expect(snapshot.id).toBe("memory-snapshot-1");
    expect(sandboxes.length).toBe(3);
    expect(fromSnapshot).toEqual(["memory-snapshot-1", "memory-snapshot-1", "memory-snapshot-1"]);
    await Promise.all(sandboxes.map((sandbox) => sandbox.kill()));
    const refused = await caught(() => forkSandbox(source, { count: 1, createOptions: { fromSnapshot: "x" } as never }));
    expect(refused.code).toBe("SBX_INVALID_ARGUMENT");
    for (const count of [0, 65, 1.5]) expect((await caught(() => forkSandbox(source, { count }))).code).toBe("SBX_INVALID_ARGUMENT");
  });
});
