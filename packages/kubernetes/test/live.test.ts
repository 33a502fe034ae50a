/**
 * Against a real cluster, only when `SBX_KUBERNETES_LIVE_KUBECONFIG` names a kubeconfig (docs/backends/kubernetes.md:
 * kind with Calico or Cilium). It proves what the emulator cannot: admission of the hardened Pod, exec through a real
 * API server and kubelet, and the CNI's NetworkPolicy enforcement (or, with `SBX_KUBERNETES_LIVE_EXPECT_UNENFORCED=1`
 * on a CNI without policy support, the probe's refusal). Optional: `SBX_KUBERNETES_LIVE_IMAGE`, `SBX_KUBERNETES_LIVE_NAMESPACE`.
 */
import { readFileSync } from "node:fs";
import { createSandbox, isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

const kubeconfigPath = process.env.SBX_KUBERNETES_LIVE_KUBECONFIG;
const skipReason = kubeconfigPath
  ? undefined
  : "SBX_KUBERNETES_LIVE_KUBECONFIG is not set (no cluster to test against; see docs/backends/kubernetes.md)";
if (skipReason) console.warn(`[kubernetes live] skipped: ${skipReason}`);

const settings = {
  kubeconfig: kubeconfigPath ? readFileSync(kubeconfigPath, "utf8") : undefined,
  namespace: process.env.SBX_KUBERNETES_LIVE_NAMESPACE ?? "sbx",
  defaultImage: process.env.SBX_KUBERNETES_LIVE_IMAGE ?? "python:3.12-slim",
};

describe.skipIf(skipReason !== undefined)("kubernetes live (real cluster)", () => {
  if (process.env.SBX_KUBERNETES_LIVE_EXPECT_UNENFORCED === "1") {
    it("refuses the cluster: its CNI accepts NetworkPolicy without enforcing it", async () => {
      const error = await createSandbox(createSandboxProvider(settings), {}).then(
        () => new Error("created"),
        (caught: unknown) => caught,
      );
      expect(isSbxError(error) && error.code).toBe("SBX_POLICY_NOT_ENFORCED");
    }, 300_000);
    return;
  }

  it("creates a hardened Pod, runs commands and code in it, proves egress denied, and deletes it", async () => {
    await using sandbox = await createSandbox(createSandboxProvider(settings), { limits: { cpus: 0.5, memoryMiB: 256 } });
    const identity = await sandbox.commands.run("id -u; grep CapEff /proc/self/status; touch /etc/x 2>&1 || echo read-only");
    expect(identity.stdout).toMatch(/^1000\nCapEff:\s+0+\n/);
    expect(identity.stdout).toContain("read-only");
    expect((await sandbox.runCode("1 + 1")).results?.find((result) => result.isMainResult)?.data["text/plain"]).toBe("2");
    const network = sandbox.audit().policies.network.applied as { egress: string; probe: Array<{ outcome: string }> };
    expect(network.egress).toBe("deny");
    for (const path of network.probe) expect(path.outcome).toMatch(/^(blocked|timeout)/);
  }, 300_000);
});
