/**
 * Named sandboxes' pure parts (ADR 0058): the id every caller derives from a name, the ingress-only claim an
 * egress-allowed named sandbox uses (it must not read as deny-all), and the policy comparison on attach.
 */
import { describe, expect, it } from "vitest";
import { buildDenyAllNetworkPolicy, buildIngressOnlyClaimPolicy, deniesAllEgress, namedSandboxIdOf } from "../src/kubernetes-manifests.js";
import { policyDifferences } from "../src/named-kubernetes-sandboxes.js";

describe("namedSandboxIdOf", () => {
  it("derives the same 16 hex digits for a name in every process, different ones for different names", () => {
    expect(namedSandboxIdOf("agent-1")).toMatch(/^[0-9a-f]{16}$/);
    expect(namedSandboxIdOf("agent-1")).toBe(namedSandboxIdOf("agent-1"));
    expect(namedSandboxIdOf("agent-1")).not.toBe(namedSandboxIdOf("Agent-1"));
    expect(namedSandboxIdOf("agent_1.")).not.toBe(namedSandboxIdOf("agent-1"));
  });
});

describe("claim policies", () => {
  const annotations = { "sbx.dev/name": "agent-1" };

  it("the deny-all claim denies all egress and carries the name", () => {
    const policy = buildDenyAllNetworkPolicy("0123456789abcdef", annotations);
    expect(deniesAllEgress(policy)).toBe(true);
    expect(policy.metadata?.annotations).toEqual(annotations);
  });

  it("the egress-allowed claim restricts ingress alone, selects only the sandbox's Pod, and does not read as deny-all", () => {
    const policy = buildIngressOnlyClaimPolicy("0123456789abcdef", annotations);
    expect(policy.metadata?.name).toBe("sbx-0123456789abcdef");
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: { "sbx.dev/sandbox-id": "0123456789abcdef" } },
      policyTypes: ["Ingress"],
      ingress: [],
    });
    expect(deniesAllEgress(policy)).toBe(false);
  });
});

describe("policyDifferences", () => {
  const asked = { egress: "deny" as const, user: "default", cpus: 1, memoryMiB: 256 };
  const none = { cpus: false, memoryMiB: false };

  it("matches the same policy, and limits only when the caller gave them", () => {
    expect(policyDifferences(asked, asked, { cpus: true, memoryMiB: true })).toEqual([]);
    expect(policyDifferences({ ...asked, cpus: 2 }, asked, none)).toEqual([]);
    expect(policyDifferences({ ...asked, cpus: 2 }, asked, { cpus: true, memoryMiB: false })).toEqual(["cpus 2 (asked: 1)"]);
  });

  it("refuses another egress or user, and a missing or unreadable record", () => {
    expect(policyDifferences({ ...asked, egress: "allow" }, asked, none)).toEqual(["egress allow (asked: deny)"]);
    expect(policyDifferences({ ...asked, user: "root" }, asked, none)).toEqual(["user root (asked: default)"]);
    expect(policyDifferences(undefined, asked, none)).toEqual(["egress undefined (asked: deny)", "user undefined (asked: default)"]);
  });
});
