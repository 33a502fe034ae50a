/**
 * The manifest builders (ADR 0048): the hardened Pod spec, the deny-all policy, labels, and that nothing secret can be
 * in either (they take no environment at all).
 */
import { describe, expect, it } from "vitest";
import { buildDenyAllNetworkPolicy, buildSandboxPod, MANAGED_LABEL, SANDBOX_ID_LABEL, type PodPlan } from "../src/kubernetes-manifests.js";
import { spawnInvocation } from "../src/spawn-header.js";
import { cpusOfQuantity, mebibytesOfQuantity } from "../src/kubernetes-provider.js";
import { parseKubernetesSettings } from "../src/kubernetes-settings.js";

const plan: PodPlan = {
  sandboxId: "0123456789abcdef",
  image: "python:3.12-slim",
  cpus: 1.5,
  memoryMiB: 512,
  workspaceSizeMiB: 1024,
  runAsUser: 1000,
  runtimeClassName: "gvisor",
  activeDeadlineSeconds: 600,
  expiresAt: new Date("2026-12-04T21:00:00Z"),
  metadata: { owner: "team-a" },
};

describe("buildSandboxPod", () => {
  const pod = buildSandboxPod(plan);
  const spec = pod.spec!;
  const container = spec.containers[0]!;

  it("runs non-root with no privilege escalation, no capabilities, a read-only root and seccomp RuntimeDefault", () => {
    expect(spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
  });

  it("mounts no service account token, shares no host namespace, links no services and points at no cluster DNS", () => {
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.enableServiceLinks).toBe(false);
    expect([spec.hostNetwork, spec.hostPID, spec.hostIPC, spec.shareProcessNamespace]).toEqual([false, false, false, false]);
    expect(spec.dnsPolicy).toBe("None");
    expect(spec.dnsConfig).toEqual({ nameservers: ["127.0.0.1"] });
    expect(spec.restartPolicy).toBe("Never");
  });

  it("requests exactly what it limits, sizes the workspace emptyDir, and sets the deadline and runtime class", () => {
    expect(container.resources).toEqual({ requests: { cpu: "1500m", memory: "512Mi" }, limits: { cpu: "1500m", memory: "512Mi" } });
    expect(spec.volumes).toEqual([
      { name: "workspace", emptyDir: { sizeLimit: "1024Mi" } },
      { name: "tmp", emptyDir: { sizeLimit: "256Mi" } },
    ]);
    expect(container.volumeMounts).toEqual([
      { name: "workspace", mountPath: "/workspace" },
      { name: "tmp", mountPath: "/tmp" },
    ]);
    expect(spec.activeDeadlineSeconds).toBe(600);
    expect(spec.runtimeClassName).toBe("gvisor");
    expect(container.image).toBe("python:3.12-slim");
  });

  it("labels the Pod for listing and sweeping and annotates its expiry and the caller's metadata", () => {
    expect(pod.metadata?.name).toBe("sbx-0123456789abcdef");
    expect(pod.metadata?.labels).toEqual({
      [MANAGED_LABEL]: "true",
      [SANDBOX_ID_LABEL]: "0123456789abcdef",
      "app.kubernetes.io/managed-by": "sbx",
      "metadata.sbx.dev/owner": "team-a",
    });
    expect(pod.metadata?.annotations?.["sbx.dev/expires-at"]).toBe("2026-12-04T21:00:00.000Z");
    expect(JSON.parse(pod.metadata!.annotations!["sbx.dev/metadata"]!)).toEqual({ owner: "team-a" });
  });

  it("carries no environment variable, env source or secret volume at all", () => {
    expect(container.env).toBeUndefined();
    expect(container.envFrom).toBeUndefined();
    expect(JSON.stringify(pod)).not.toMatch(/secret|"env"/i);
  });
});

describe("buildDenyAllNetworkPolicy", () => {
  it("selects only the sandbox's Pod and allows nothing in or out", () => {
    expect(buildDenyAllNetworkPolicy("0123456789abcdef")).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: {
        name: "sbx-0123456789abcdef",
        labels: { [MANAGED_LABEL]: "true", [SANDBOX_ID_LABEL]: "0123456789abcdef", "app.kubernetes.io/managed-by": "sbx" },
      },
      spec: { podSelector: { matchLabels: { [SANDBOX_ID_LABEL]: "0123456789abcdef" } }, policyTypes: ["Ingress", "Egress"], ingress: [], egress: [] },
    });
  });
});

describe("spawnInvocation", () => {
  it("keeps the command and the environment (secrets included) out of the exec URL's argv", () => {
    const invocation = spawnInvocation(
      { command: "echo $TOKEN", cwd: "/workspace", env: { TOKEN: "s3cr3t-value" }, stdin: false, onStdout: () => {}, onStderr: () => {} },
      "feedface",
    );
    expect(invocation.argv.join(" ")).not.toContain("s3cr3t-value");
    expect(invocation.argv.join(" ")).not.toContain("echo $TOKEN");
    const header = new TextDecoder().decode(invocation.header);
    expect(header).toContain("'TOKEN=s3cr3t-value'");
    expect(invocation.argv.at(-1)).toBe(String(invocation.header.byteLength));
    expect(header.endsWith("#sbx-header-end")).toBe(true);
  });
});

describe("settings and quantities", () => {
  it("applies the defaults and refuses unknown fields", () => {
    expect(parseKubernetesSettings({})).toMatchObject({ namespace: "sbx", runAsUser: 1000, workspaceSizeMiB: 1024, createTimeoutMs: 120_000 });
    expect(() => parseKubernetesSettings({ namespce: "x" })).toThrow(/namespce/);
    expect(() => parseKubernetesSettings({ runAsUser: 0 })).toThrow(/runAsUser/);
  });

  it("reads quantities back exactly", () => {
    expect([cpusOfQuantity("1500m"), cpusOfQuantity("2"), cpusOfQuantity("x")]).toEqual([1.5, 2, null]);
    expect([mebibytesOfQuantity("256Mi"), mebibytesOfQuantity("1Gi"), mebibytesOfQuantity("1G")]).toEqual([256, 1024, null]);
  });
});
