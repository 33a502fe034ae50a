/**
 * What the adapter refuses or reports on a cluster that is not what it should be, through the kube emulator: a
 * network plugin that accepts NetworkPolicy but does not enforce it (the create-time probe), a Pod that cannot be
 * scheduled (with its events), an image that cannot be pulled, another policy widening ours, a mesh-injected
 * namespace. Each refusal leaves no Pod behind.
 */
import { createSandbox, isSbxError } from "@sbx/core";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { startKubeEmulator } from "@sbx/kube-emulator";
import { describe, expect, it } from "vitest";
import { createSandboxProvider, ImagePullError, PodUnschedulableError } from "../src/index.js";

const image = process.env.SBX_KUBE_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
const shared = shareEmulator({
  start: () => startKubeEmulator({ image, namespaces: { sbx: {}, meshed: { "istio-injection": "enabled" } } }),
  backend: "k8s",
  label: "kubernetes refusals",
});

function provider(settings: Record<string, unknown> = {}) {
  return createSandboxProvider({ kubeconfig: shared.emulator!.kubeconfig, defaultImage: image, ...settings });
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("the create succeeded"),
    (error: unknown) => error,
  );
}

describe("kubernetes adapter refusals (kube emulator)", () => {
  it("refuses a cluster that accepts the deny-all NetworkPolicy but does not enforce it, and deletes the Pod", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    shared.emulator.setModes({ networkPolicy: "ignored" });
    try {
      const error = await refusal(createSandbox(provider(), {}));
      expect(isSbxError(error) && error.code).toBe("SBX_POLICY_NOT_ENFORCED");
      expect((error as Error).message).toMatch(/accepted the sandbox's deny-all NetworkPolicy but does not enforce it/);
      expect((error as Error).message).toContain(`${shared.emulator.nodeAddress}:443 connected`);
      expect(shared.emulator.listPodNames("sbx")).toEqual([]);
      expect(shared.emulator.listNetworkPolicyNames("sbx")).toEqual([]);
    } finally {
      shared.emulator.setModes({ networkPolicy: "enforced" });
    }
  });

  it("creates on an enforcing cluster and records the probe's sampled paths as blocked", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    await using sandbox = await createSandbox(provider(), {});
    const applied = sandbox.audit().policies.network.applied as { egress: string; probe: Array<{ target: string; outcome: string }> };
    expect(applied.egress).toBe("deny");
    expect(applied.probe.map((path) => path.target)).toEqual([`${shared.emulator.nodeAddress}:443`, `${shared.emulator.nodeAddress}:10250`]);
    for (const path of applied.probe) expect(path.outcome).toMatch(/^(blocked|timeout)/);
  });

  it("reports an unschedulable Pod with its events within the create timeout, and deletes it", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    shared.emulator.setModes({ scheduling: "unschedulable" });
    try {
      const error = await refusal(createSandbox(provider({ createTimeoutMs: 1_500 }), {}));
      expect(error).toBeInstanceOf(PodUnschedulableError);
      expect((error as PodUnschedulableError).events.map((event) => event.reason)).toEqual(["FailedScheduling"]);
      expect((error as PodUnschedulableError).retryable).toBe(true);
      expect(shared.emulator.listPodNames("sbx")).toEqual([]);
    } finally {
      shared.emulator.setModes({ scheduling: "normal" });
    }
  });

  it("reports an image that cannot be pulled, with the kubelet's reason", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const error = await refusal(createSandbox("k8s://sbx-test/absent-image:0", { settings: { kubeconfig: shared.emulator.kubeconfig } }));
    // Loaded through the k8s:// scheme: the built package, a different copy of the class than ../src's.
    expect((error as ImagePullError).name).toBe("ImagePullError");
    expect(isSbxError(error) && error.code).toBe("SBX_PROVIDER");
    expect((error as ImagePullError).reason).toBe("ErrImagePull");
    expect((error as ImagePullError).image).toBe("sbx-test/absent-image:0");
    expect(shared.emulator.listPodNames("sbx")).toEqual([]);
  });

  it("refuses a namespace where another policy selects every Pod and allows egress", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const response = await fetch(`${shared.emulator.url}/apis/networking.k8s.io/v1/namespaces/sbx/networkpolicies`, {
      method: "POST",
      headers: { authorization: `Bearer ${shared.emulator.token}`, "content-type": "application/json" },
      body: JSON.stringify({ metadata: { name: "allow-all-egress" }, spec: { podSelector: {}, policyTypes: ["Egress"], egress: [{}] } }),
    });
    expect(response.status).toBe(201);
    try {
      const error = await refusal(createSandbox(provider(), {}));
      expect(isSbxError(error) && error.code).toBe("SBX_POLICY_NOT_ENFORCED");
      expect((error as Error).message).toContain("allow-all-egress");
      expect(shared.emulator.listPodNames("sbx")).toEqual([]);
    } finally {
      await fetch(`${shared.emulator.url}/apis/networking.k8s.io/v1/namespaces/sbx/networkpolicies/allow-all-egress`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${shared.emulator.token}` },
      });
    }
  });

  it("refuses a namespace with sidecar injection on", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const error = await refusal(createSandbox(provider({ namespace: "meshed" }), {}));
    expect(isSbxError(error) && error.code).toBe("SBX_POLICY_NOT_ENFORCED");
    expect((error as Error).message).toContain("istio-injection=enabled");
    expect(shared.emulator.listPodNames("meshed")).toEqual([]);
  });

  it("on an API server without v5.channel.k8s.io (before 1.30), one exec per command runs but refuses to close stdin rather than end the command", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    shared.emulator.setModes({ execProtocols: "v4" });
    try {
      // Through the agent (the default) stdin closes on v4 too (agent-commands.emulator.test.ts); an exec cannot.
      await using sandbox = await createSandbox(provider({ agentCommands: "off" }), {});
      expect((await sandbox.commands.run("echo over-v4")).stdout).toBe("over-v4\n");
      // The kill's own exec takes no stdin, so it works without v5 too.
      const sleeper = await sandbox.commands.start("sleep 60");
      await sleeper.kill();
      expect((await sleeper.wait()).exitCode).toBe(137);
      const error = await sandbox.commands.run("cat", { stdin: "input" }).then(
        () => new Error("the command succeeded"),
        (caught: unknown) => caught,
      );
      expect(isSbxError(error) && error.code).toBe("SBX_PROVIDER");
      expect((error as Error).message).toContain("cannot close a command's stdin");
    } finally {
      shared.emulator.setModes({ execProtocols: "v5" });
    }
  });
});
