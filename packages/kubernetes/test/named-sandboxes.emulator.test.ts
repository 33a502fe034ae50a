/**
 * Named sandboxes through the kube emulator (ADR 0058), beyond the contract's race: a caller attaching with egress
 * denied runs the egress probe itself (the creator's may not have finished); a caller asking another egress
 * policy than the sandbox of that name has is refused; an egress-allowed named sandbox's claim does not read as
 * deny-all on attach; ending the sandbox removes its Pod and its claim, so the name can be created again.
 */
import { getOrCreateSandbox, isSbxError, listSandboxes } from "@sbx/core";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { startKubeEmulator } from "@sbx/kube-emulator";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSandboxProvider, objectNameOf } from "../src/index.js";

const image = process.env.SBX_KUBE_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
const shared = shareEmulator({ start: () => startKubeEmulator({ image }), backend: "k8s", label: "kubernetes named sandboxes" });

function provider() {
  return createSandboxProvider({ kubeconfig: shared.emulator!.kubeconfig, namespace: "sbx", defaultImage: image });
}

describe("kubernetes named sandboxes (kube emulator)", () => {
  it("refuses a caller asking another egress policy, lists the name, and frees the name when the sandbox ends", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const backend = provider();
    const name = `named-${randomUUID().slice(0, 8)}`;
    const first = await getOrCreateSandbox(backend, { name, network: { egress: "deny" } });
    expect(first.created).toBe(true);
    const objectName = objectNameOf(first.sandbox.id);
    try {
      expect(shared.emulator.listNetworkPolicyNames("sbx")).toContain(objectName);
      const attached = await getOrCreateSandbox(backend, { name, network: { egress: "deny" } });
      expect([attached.created, attached.sandbox.id]).toEqual([false, first.sandbox.id]);
      const applied = attached.sandbox.audit().policies.network.applied as { egress: string; probe: Array<{ target: string; outcome: string }> };
      expect(applied.egress).toBe("deny");
      expect(applied.probe.length).toBeGreaterThan(0);
      for (const path of applied.probe) expect(path.outcome).toMatch(/^(blocked|timeout)/);
      const error = await getOrCreateSandbox(backend, { name, network: { egress: "allow" } }).then(
        () => new Error("attached"),
        (caught: unknown) => caught,
      );
      expect(isSbxError(error) && error.code).toBe("SBX_POLICY_NOT_ENFORCED");
      expect((error as Error).message).toContain("egress deny (asked: allow)");
      const listed = await listSandboxes(backend, {});
      expect(listed.find((entry) => entry.id === first.sandbox.id)?.name).toBe(name);
    } finally {
      await first.sandbox.kill();
    }
    expect(shared.emulator.listPodNames("sbx")).not.toContain(objectName);
    expect(shared.emulator.listNetworkPolicyNames("sbx")).not.toContain(objectName);
    const again = await getOrCreateSandbox(backend, { name, network: { egress: "deny" } });
    try {
      expect(again.created).toBe(true);
      expect(again.sandbox.id).toBe(first.sandbox.id);
    } finally {
      await again.sandbox.kill();
    }
  });

  it("attaches to an egress-allowed named sandbox and reports its egress as allowed, not denied by its claim", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const backend = provider();
    const name = `open-${randomUUID().slice(0, 8)}`;
    const creator = await getOrCreateSandbox(backend, { name, network: { egress: "allow" } });
    try {
      const attached = await getOrCreateSandbox(backend, { name, network: { egress: "allow" } });
      expect([creator.created, attached.created]).toEqual([true, false]);
      expect(attached.sandbox.id).toBe(creator.sandbox.id);
      expect((creator.sandbox.audit().policies.network.applied as { egress: string }).egress).toBe("allow");
      expect((attached.sandbox.audit().policies.network.applied as { egress: string }).egress).toBe("allow");
      expect((await attached.sandbox.commands.run("echo attached")).stdout).toBe("attached\n");
    } finally {
      await creator.sandbox.kill();
    }
  });
});
