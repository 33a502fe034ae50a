import { isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { planE2BNetwork, toAllowOutEntry } from "../src/e2b-network-policy.js";

describe("planE2BNetwork", () => {
  it("deny sends allowInternetAccess false and denyOut all traffic (E2B allows egress by default)", () => {
    const plan = planE2BNetwork({ egress: "deny" });
    expect(plan.request).toEqual({ allowInternetAccess: false, network: { allowOut: [], denyOut: ["0.0.0.0/0"] } });
    expect(plan.record.requested).toEqual({ egress: "deny" });
    expect(plan.record.applied).toEqual({ egress: "deny" });
    expect(plan.record.enforcement).toContain("allowInternetAccess: false");
  });

  it("allow sends allowInternetAccess true explicitly and no rules", () => {
    const plan = planE2BNetwork({ egress: "allow" });
    expect(plan.request).toEqual({ allowInternetAccess: true });
    expect(plan.record.applied).toEqual({ egress: "allow" });
  });

  it("an allowlist maps onto allowOut with denyOut all traffic, lower-cased and de-duplicated", () => {
    const plan = planE2BNetwork({ egress: "deny", allow: ["PyPI.org", "*.pythonhosted.org", "10.0.0.5", "172.16.0.0/12", "pypi.org."] });
    expect(plan.request).toEqual({ network: { allowOut: ["pypi.org", "*.pythonhosted.org", "10.0.0.5", "172.16.0.0/12"], denyOut: ["0.0.0.0/0"] } });
    expect(plan.record.applied).toEqual({ egress: "deny", allow: ["pypi.org", "*.pythonhosted.org", "10.0.0.5", "172.16.0.0/12"] });
    expect(plan.record.enforcement).toMatch(/Host header or TLS SNI/);
    expect(plan.record.enforcement).toMatch(/not the apex/);
  });

  it("an IP-only allowlist does not claim domain matching", () => {
    expect(planE2BNetwork({ egress: "deny", allow: ["10.0.0.5"] }).record.enforcement).not.toMatch(/SNI/);
  });

  it("refuses IPv6 entries with CapabilityNotSupportedError (E2B rules are IPv4), naming the entry", () => {
    for (const entry of ["::1", "2001:db8::/32"]) {
      let caught: unknown;
      try {
        toAllowOutEntry(entry, 2);
      } catch (error) {
        caught = error;
      }
      expect(isSbxError(caught, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
      expect((caught as { capability: string }).capability).toBe("EGRESS_ALLOWLIST");
      expect((caught as Error).message).toContain("network.allow.2");
      expect((caught as { supportedBy: string[] }).supportedBy).not.toContain("e2b");
    }
  });

  it("refuses forms E2B cannot enforce as asked with InvalidArgumentError naming the field", () => {
    for (const entry of [
      "https://pypi.org",
      "pypi.org:443",
      "*",
      "*.com".replace(".com", ""),
      "a.*.example.com",
      "pypi*.org",
      "10.0.0.0/33",
      "bad_host.org",
    ]) {
      let caught: unknown;
      try {
        planE2BNetwork({ egress: "deny", allow: ["ok.example.com", entry] });
      } catch (error) {
        caught = error;
      }
      expect(isSbxError(caught, "SBX_INVALID_ARGUMENT"), entry).toBe(true);
      expect((caught as { field: string }).field).toBe("network.allow.1");
    }
  });
});
