import { isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { classifyAllowEntry, planModalNetwork } from "../src/modal-network-policy.js";

function caught(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("planModalNetwork", () => {
  it("deny sends blockNetwork: true (Modal allows all egress by default), and says so in the audit record", () => {
    const plan = planModalNetwork({ egress: "deny" });
    expect(plan.request).toEqual({ blockNetwork: true });
    expect(plan.record.requested).toEqual({ egress: "deny" });
    expect(plan.record.applied).toEqual({ egress: "deny" });
    expect(plan.record.enforcement).toContain("blockNetwork: true");
  });

  it("allow sends no egress restriction (Modal's OPEN)", () => {
    const plan = planModalNetwork({ egress: "allow" });
    expect(plan.request).toEqual({});
    expect(plan.record.applied).toEqual({ egress: "allow" });
  });

  it("an allowlist maps IPv4 addresses (as /32) and CIDRs onto outboundCidrAllowlist and host names onto outboundDomainAllowlist, lower-cased and de-duplicated", () => {
    const plan = planModalNetwork({
      egress: "deny",
      allow: ["PyPI.org", "10.0.0.5", "172.16.0.0/12", "pypi.org.", "10.0.0.5", "pythonhosted.org", "*.pythonhosted.org"],
    });
    expect(plan.request).toEqual({
      outboundCidrAllowlist: ["10.0.0.5/32", "172.16.0.0/12"],
      outboundDomainAllowlist: ["pypi.org", "pythonhosted.org", "*.pythonhosted.org"],
    });
    expect(plan.record.applied).toEqual({
      egress: "deny",
      allow: ["10.0.0.5/32", "172.16.0.0/12", "pypi.org", "pythonhosted.org", "*.pythonhosted.org"],
    });
    expect(plan.record.enforcement).toMatch(/TLS server name \(SNI\)/);
    expect(plan.record.enforcement).toMatch(/Host header/);
  });

  it("an IP-only allowlist does not claim domain matching", () => {
    const plan = planModalNetwork({ egress: "deny", allow: ["192.168.1.0/24"] });
    expect(plan.request).toEqual({ outboundCidrAllowlist: ["192.168.1.0/24"], outboundDomainAllowlist: [] });
    expect(plan.record.enforcement).not.toMatch(/SNI/);
  });

  it("refuses a *.suffix wildcard without its apex: Modal's domain allowlist would also let the apex through", () => {
    const error = caught(() => planModalNetwork({ egress: "deny", allow: ["pypi.org", "*.pythonhosted.org"] }));
    expect(isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((error as Error).message).toContain("network.allow.1");
    expect((error as Error).message).toContain("pythonhosted.org");
    expect((error as { supportedBy: string[] }).supportedBy).not.toContain("modal");
  });

  it("refuses IPv6 entries with CapabilityNotSupportedError naming the entry", () => {
    for (const entry of ["::1", "2001:db8::/32"]) {
      const error = caught(() => classifyAllowEntry(entry, 3));
      expect(isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
      expect((error as { capability: string }).capability).toBe("EGRESS_ALLOWLIST");
      expect((error as Error).message).toContain("network.allow.3");
    }
  });

  it("refuses forms Modal cannot enforce as asked with InvalidArgumentError naming the field", () => {
    for (const entry of ["https://pypi.org", "pypi.org:443", "*", "a.*.example.com", "pypi*.org", "10.0.0.0/33", "bad_host.org", "localhost"]) {
      const error = caught(() => planModalNetwork({ egress: "deny", allow: ["ok.example.com", entry] }));
      expect(isSbxError(error, "SBX_INVALID_ARGUMENT"), entry).toBe(true);
      expect((error as { field: string }).field).toBe("network.allow.1");
    }
  });
});
