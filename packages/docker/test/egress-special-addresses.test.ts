import { describe, expect, it } from "vitest";
import { hostAddressRefusal } from "../src/egress/host-addresses.js";
import { mappedIpv4, specialPurposeRange } from "../src/egress/special-purpose-addresses.js";

describe("egress: the special-purpose address table and the host's own addresses (no engine needed)", () => {
  it("every IANA special-purpose IPv4 range is named", () => {
    const cases: Array<[string, RegExp]> = [
      ["0.0.0.0", /this network/],
      ["10.1.2.3", /private/],
      ["100.64.0.1", /CGNAT/],
      ["127.0.0.2", /loopback/],
      ["169.254.169.254", /link-local/],
      ["172.31.255.255", /private/],
      ["192.0.0.9", /IETF protocol/],
      ["192.0.2.1", /TEST-NET-1/],
      ["192.31.196.1", /AS112/],
      ["192.52.193.1", /AMT/],
      ["192.88.99.1", /6to4 relay/],
      ["192.168.0.1", /private/],
      ["192.175.48.1", /AS112/],
      ["198.18.0.1", /benchmarking/],
      ["198.19.255.255", /benchmarking/],
      ["198.51.100.7", /TEST-NET-2/],
      ["203.0.113.9", /TEST-NET-3/],
      ["224.0.0.1", /multicast/],
      ["255.255.255.255", /reserved/],
    ];
    for (const [address, name] of cases) expect(specialPurposeRange(address), address).toMatch(name);
  });

  it("every IANA special-purpose IPv6 range is named, 6to4, Teredo and discard-only included", () => {
    const cases: Array<[string, RegExp]> = [
      ["::", /unspecified/],
      ["::1", /loopback/],
      ["::127.0.0.1", /IPv4-compatible/],
      ["64:ff9b::8.8.8.8", /NAT64/],
      ["64:ff9b:1::1", /local-use/],
      ["100::1", /discard-only/],
      ["2001:db8::1", /documentation/],
      ["2001::1", /Teredo/],
      ["2001:2::1", /benchmarking/],
      ["2002:c633:6407::1", /6to4/],
      ["2620:4f:8000::1", /AS112/],
      ["3fff::1", /documentation/],
      ["fd00::1", /unique-local/],
      ["fe80::1%eth0", /link-local/],
      ["fec0::1", /site-local/],
      ["ff02::1", /multicast/],
    ];
    for (const [address, name] of cases) expect(specialPurposeRange(address), address).toMatch(name);
  });

  it("IPv4-mapped IPv6 addresses, in every spelling, are judged by the IPv4 address inside", () => {
    expect(mappedIpv4("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(mappedIpv4("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(mappedIpv4("0:0:0:0:0:ffff:c633:6407")).toBe("198.51.100.7");
    expect(mappedIpv4("::FFFF:C000:0201")).toBe("192.0.2.1");
    expect(mappedIpv4("2001:db8::1")).toBeUndefined();
    expect(specialPurposeRange("::ffff:127.0.0.1")).toMatch(/^IPv4-mapped form of loopback/);
    expect(specialPurposeRange("::ffff:c633:6407")).toMatch(/^IPv4-mapped form of documentation, TEST-NET-2/);
    expect(specialPurposeRange("0:0:0:0:0:ffff:c0.58.63.1")).toBe("not an IP address");
    expect(specialPurposeRange("::ffff:c058:6301")).toMatch(/^IPv4-mapped form of 6to4 relay/);
    expect(specialPurposeRange("::ffff:a9fe:a9fe")).toMatch(/^IPv4-mapped form of link-local/);
    expect(specialPurposeRange("::ffff:8.8.8.8")).toBeUndefined();
  });

  it("ordinary public unicast addresses are not special", () => {
    for (const address of ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700::1111", "2a00:1450::1"])
      expect(specialPurposeRange(address), address).toBeUndefined();
    expect(specialPurposeRange("not-an-address")).toBe("not an IP address");
  });

  it("an address bound on one of the host's interfaces is refused, in its IPv4-mapped form too; others are not", () => {
    const interfaces = {
      eth9: [
        { address: "93.184.216.34", family: "IPv4" },
        { address: "2a00:1450::7", family: "IPv6" },
        { address: "fe80::1", family: "IPv6", scopeid: 2 },
      ],
    };
    const read = () => interfaces;
    expect(hostAddressRefusal("93.184.216.34", read)).toMatch(/bound on this host's interface eth9/);
    expect(hostAddressRefusal("::ffff:93.184.216.34", read)).toMatch(/bound on this host's interface eth9/);
    expect(hostAddressRefusal("2a00:1450:0:0::7", read)).toMatch(/bound on this host's interface eth9/);
    expect(hostAddressRefusal("93.184.216.35", read)).toBeUndefined();
    expect(hostAddressRefusal("8.8.8.8", read)).toBeUndefined();
  });

  it("the host's interfaces are read at each check, never cached", () => {
    let interfaces: Record<string, Array<{ address: string; family: string }>> = {};
    const read = () => interfaces;
    expect(hostAddressRefusal("93.184.216.34", read)).toBeUndefined();
    interfaces = { late0: [{ address: "93.184.216.34", family: "IPv4" }] };
    expect(hostAddressRefusal("93.184.216.34", read)).toMatch(/late0/);
  });
});

describe("egress: the host's addresses as read on this machine", () => {
  it("include loopback and every address os.networkInterfaces() lists", async () => {
    const { readHostAddresses } = await import("../src/egress/host-addresses.js");
    const { networkInterfaces } = await import("node:os");
    expect(hostAddressRefusal("127.0.0.1")).toMatch(/this host/);
    for (const entries of Object.values(networkInterfaces())) {
      for (const entry of entries ?? []) expect(hostAddressRefusal(entry.address), entry.address).toMatch(/this host/);
    }
    expect(Object.keys(readHostAddresses()).length).toBeGreaterThan(0);
  });
});
