import { describe, expect, it } from "vitest";
import { isSbxError } from "../src/index.ts";
import { parseAllowlistHost, type AllowlistHostRules } from "../src/adapter.ts";

const rules: AllowlistHostRules = {
  backend: "fake",
  ipv6Refusal: "its egress rules are IPv4 only",
  wildcardRule: 'only a leading "*." label is accepted',
};

function refusal(entry: string, entryRules: AllowlistHostRules = rules): unknown {
  try {
    parseAllowlistHost(entry, 4, entryRules);
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${JSON.stringify(entry)} to be refused`);
}

describe("parseAllowlistHost (one reading of a network.allow entry for IPv4-and-domain egress rules)", () => {
  it("reads IPv4 addresses, IPv4 ranges and domains, lower-cased, trimmed and without a trailing dot", () => {
    expect(parseAllowlistHost(" 10.0.0.5 ", 0, rules)).toEqual({ kind: "ipv4", value: "10.0.0.5" });
    expect(parseAllowlistHost("172.16.0.0/12", 0, rules)).toEqual({ kind: "ipv4-cidr", value: "172.16.0.0/12" });
    expect(parseAllowlistHost("PyPI.org.", 0, rules)).toEqual({ kind: "domain", value: "pypi.org" });
    expect(parseAllowlistHost("*.pythonhosted.org", 0, rules)).toEqual({ kind: "domain", value: "*.pythonhosted.org" });
  });

  it("refuses IPv6 with CapabilityNotSupportedError naming the field and the backend's reason", () => {
    const error = refusal("2001:db8::/32");
    expect(isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((error as Error).message).toContain("network.allow.4");
    expect((error as Error).message).toContain("its egress rules are IPv4 only");
  });

  it("refuses what is not a host with InvalidArgumentError naming the field", () => {
    for (const entry of ["https://pypi.org", "pypi.org:443", "*", "*.com", "a.*.example.com", "10.0.0.0/33", "bad_host.org", "intranet"]) {
      const error = refusal(entry);
      expect(isSbxError(error, "SBX_INVALID_ARGUMENT"), entry).toBe(true);
      expect((error as { field: string }).field).toBe("network.allow.4");
    }
    expect((refusal("a.*.example.com") as Error).message).toContain('only a leading "*." label is accepted');
  });

  it("accepts a single-label name only when the backend's rules say so", () => {
    expect(parseAllowlistHost("intranet", 0, { ...rules, singleLabelNames: true })).toEqual({ kind: "domain", value: "intranet" });
  });
});
