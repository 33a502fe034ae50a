/**
 * Listing by label (ADR 0058): which metadata entries become labels (what a selector can narrow by), the selector,
 * the Pod phase as a listed state, the metadata read back losslessly from the annotation, the filter applied again to
 * what the selector could not narrow, and the widening-policy check seeing the metadata labels a policy could select.
 */
import type { NetworkingV1Api, V1NetworkPolicy, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { buildSandboxPod, metadataLabelOf, metadataLabelsOf, podLabelsOf, type PodPlan } from "../src/kubernetes-manifests.js";
import { listedSandboxOf, listedStateOf, listSelectorOf, recordedMetadataOf } from "../src/list-kubernetes-sandboxes.js";
import { checkNoWideningPolicy } from "../src/namespace-checks.js";

const longValue = "v".repeat(200);
const metadata = { team: "a", "contract-run": "0f3c-9d", note: "has spaces/and slashes", long: longValue, empty: "", "bad key!": "x" };

function podWith(overrides: { phase?: string; deleting?: boolean; metadata?: Record<string, string> } = {}): V1Pod {
  const plan: PodPlan = {
    sandboxId: "0123456789abcdef",
    image: "python:3.12-slim",
    cpus: 1,
    memoryMiB: 256,
    workspaceSizeMiB: 64,
    runAsUser: 1000,
    runtimeClassName: undefined,
    activeDeadlineSeconds: 600,
    expiresAt: undefined,
    metadata: overrides.metadata ?? metadata,
  };
  const pod = buildSandboxPod(plan);
  pod.metadata!.creationTimestamp = new Date("2026-12-05T00:00:01Z");
  if (overrides.deleting) pod.metadata!.deletionTimestamp = new Date("2026-12-05T00:00:02Z");
  pod.status = overrides.phase === undefined ? undefined : { phase: overrides.phase };
  return pod;
}

describe("metadata labels", () => {
  it("copies exactly the entries Kubernetes accepts as label name and value, under metadata.sbx.dev/", () => {
    expect(metadataLabelsOf(metadata)).toEqual({
      "metadata.sbx.dev/team": "a",
      "metadata.sbx.dev/contract-run": "0f3c-9d",
      "metadata.sbx.dev/empty": "",
    });
    expect(metadataLabelOf("ok", "ends-with-dash-")).toBeUndefined();
    expect(metadataLabelOf("ok", "x".repeat(64))).toBeUndefined();
    expect(metadataLabelOf("ok", "x".repeat(63))).toEqual(["metadata.sbx.dev/ok", "x".repeat(63)]);
    expect(metadataLabelOf("a/b", "x")).toBeUndefined();
  });

  it("puts them on the Pod beside the sandbox labels, which they cannot override", () => {
    const labels = podLabelsOf("0123456789abcdef", { "sbx.dev/managed": "false", team: "a" });
    expect(labels["sbx.dev/managed"]).toBe("true");
    expect(labels["metadata.sbx.dev/team"]).toBe("a");
    expect(podWith().metadata?.labels?.["metadata.sbx.dev/team"]).toBe("a");
  });
});

describe("listSelectorOf", () => {
  it("selects sbx's Pods and narrows by the labels a selector can hold, and only by them", () => {
    expect(listSelectorOf({})).toBe("sbx.dev/managed=true");
    expect(listSelectorOf({ team: "a", note: "has spaces/and slashes", long: longValue })).toBe("sbx.dev/managed=true,metadata.sbx.dev/team=a");
  });
});

describe("listedSandboxOf", () => {
  it("reports id, every metadata entry (long and odd values included), created time, state and no name", () => {
    expect(listedSandboxOf(podWith({ phase: "Running" }), {})).toEqual({
      id: "0123456789abcdef",
      labels: metadata,
      createdAt: "2026-12-05T00:00:01.000Z",
      state: "running",
      name: null,
    });
  });

  it("filters by the entries the selector could not narrow, from the annotation", () => {
    const pod = podWith({ phase: "Running" });
    expect(listedSandboxOf(pod, { note: "has spaces/and slashes", long: longValue })?.id).toBe("0123456789abcdef");
    expect(listedSandboxOf(pod, { note: "has spaces" })).toBeUndefined();
    expect(listedSandboxOf(pod, { long: "v" })).toBeUndefined();
    expect(listedSandboxOf(pod, { absent: "" })).toBeUndefined();
    expect(listedSandboxOf(pod, { toString: "x" })).toBeUndefined();
  });

  it("maps the Pod phase: Pending starting, Running running, finished, lost or deleting stopped", () => {
    expect(listedStateOf(podWith({ phase: "Pending" }))).toBe("starting");
    expect(listedStateOf(podWith())).toBe("starting");
    expect(listedStateOf(podWith({ phase: "Running" }))).toBe("running");
    expect(listedStateOf(podWith({ phase: "Running", deleting: true }))).toBe("stopped");
    expect(listedStateOf(podWith({ phase: "Succeeded" }))).toBe("stopped");
    expect(listedStateOf(podWith({ phase: "Failed" }))).toBe("stopped");
    expect(listedStateOf(podWith({ phase: "Unknown" }))).toBe("stopped");
  });

  it("refuses a Pod whose metadata annotation is not a JSON map of strings rather than report false labels", () => {
    for (const text of ["not json", "[]", '{"a":1}', "null"]) {
      const pod = podWith({ phase: "Running" });
      pod.metadata!.annotations!["sbx.dev/metadata"] = text;
      expect(() => recordedMetadataOf(pod)).toThrow(/sbx\.dev\/metadata/);
    }
  });
});

describe("checkNoWideningPolicy", () => {
  const allowByTeam: V1NetworkPolicy = {
    metadata: { name: "team-a-open" },
    spec: { podSelector: { matchLabels: { "metadata.sbx.dev/team": "a" } }, policyTypes: ["Egress"], egress: [{}] },
  };
  const networking = { listNamespacedNetworkPolicy: () => Promise.resolve({ items: [allowByTeam] }) } as unknown as NetworkingV1Api;

  it("refuses a policy that selects the Pod by a metadata label and allows egress", async () => {
    await expect(checkNoWideningPolicy(networking, "sbx", "0123456789abcdef", podLabelsOf("0123456789abcdef", { team: "a" }))).rejects.toMatchObject({
      code: "SBX_POLICY_NOT_ENFORCED",
    });
  });

  it("lets a Pod through that the policy does not select", async () => {
    await expect(
      checkNoWideningPolicy(networking, "sbx", "0123456789abcdef", podLabelsOf("0123456789abcdef", { team: "b" })),
    ).resolves.toBeUndefined();
  });
});
