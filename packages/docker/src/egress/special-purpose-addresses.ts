import { BlockList, isIP } from "node:net";

/** One range of the IANA special-purpose registries (or another range no public server lives in), with its name. */
interface SpecialRange {
  readonly address: string;
  readonly prefix: number;
  readonly name: string;
}

/**
 * The IANA IPv4 Special-Purpose Address Registry (every entry, globally reachable ones included: AS112 and AMT serve
 * no HTTP), plus multicast and the rest of 240/4. Checked in order: the first match names the refusal.
 */
const IPV4_RANGES: readonly SpecialRange[] = [
  { address: "0.0.0.0", prefix: 8, name: '"this network" (0.0.0.0/8, which dials the host itself)' },
  { address: "10.0.0.0", prefix: 8, name: "private (10.0.0.0/8)" },
  { address: "100.64.0.0", prefix: 10, name: "shared address space, CGNAT (100.64.0.0/10)" },
  { address: "127.0.0.0", prefix: 8, name: "loopback (127.0.0.0/8)" },
  { address: "169.254.0.0", prefix: 16, name: "link-local, cloud metadata (169.254.0.0/16)" },
  { address: "172.16.0.0", prefix: 12, name: "private (172.16.0.0/12)" },
  { address: "192.0.0.0", prefix: 24, name: "IETF protocol assignments (192.0.0.0/24)" },
  { address: "192.0.2.0", prefix: 24, name: "documentation, TEST-NET-1 (192.0.2.0/24)" },
  { address: "192.31.196.0", prefix: 24, name: "AS112-v4 (192.31.196.0/24)" },
  { address: "192.52.193.0", prefix: 24, name: "AMT (192.52.193.0/24)" },
  { address: "192.88.99.0", prefix: 24, name: "6to4 relay anycast, deprecated (192.88.99.0/24)" },
  { address: "192.168.0.0", prefix: 16, name: "private (192.168.0.0/16)" },
  { address: "192.175.48.0", prefix: 24, name: "AS112 direct delegation (192.175.48.0/24)" },
  { address: "198.18.0.0", prefix: 15, name: "benchmarking (198.18.0.0/15)" },
  { address: "198.51.100.0", prefix: 24, name: "documentation, TEST-NET-2 (198.51.100.0/24)" },
  { address: "203.0.113.0", prefix: 24, name: "documentation, TEST-NET-3 (203.0.113.0/24)" },
  { address: "224.0.0.0", prefix: 4, name: "multicast (224.0.0.0/4)" },
  { address: "240.0.0.0", prefix: 4, name: "reserved, limited broadcast included (240.0.0.0/4)" },
];

/**
 * The IANA IPv6 Special-Purpose Address Registry and the reserved blocks of the IPv6 address space. IPv4-mapped
 * addresses (::ffff:0:0/96) are not listed: they are judged by the IPv4 address inside (see `specialPurposeRange`).
 */
const IPV6_RANGES: readonly SpecialRange[] = [
  { address: "::", prefix: 128, name: "unspecified (::/128, which dials the host itself)" },
  { address: "::1", prefix: 128, name: "loopback (::1/128)" },
  { address: "64:ff9b::", prefix: 96, name: "IPv4/IPv6 translation, NAT64 (64:ff9b::/96)" },
  { address: "64:ff9b:1::", prefix: 48, name: "local-use IPv4/IPv6 translation (64:ff9b:1::/48)" },
  { address: "100::", prefix: 64, name: "discard-only (100::/64)" },
  { address: "100:0:0:1::", prefix: 64, name: "dummy prefix (100:0:0:1::/64)" },
  { address: "2001:db8::", prefix: 32, name: "documentation (2001:db8::/32)" },
  { address: "2001::", prefix: 23, name: "IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112 (2001::/23)" },
  { address: "2002::", prefix: 16, name: "6to4 (2002::/16)" },
  { address: "2620:4f:8000::", prefix: 48, name: "AS112 direct delegation (2620:4f:8000::/48)" },
  { address: "3fff::", prefix: 20, name: "documentation (3fff::/20)" },
  { address: "5f00::", prefix: 16, name: "SRv6 SIDs (5f00::/16)" },
  { address: "fc00::", prefix: 7, name: "unique-local (fc00::/7)" },
  { address: "fe80::", prefix: 10, name: "link-local (fe80::/10)" },
  { address: "fec0::", prefix: 10, name: "site-local, deprecated (fec0::/10)" },
  { address: "ff00::", prefix: 8, name: "multicast (ff00::/8)" },
  // Last: the NAT64 prefixes above are inside it.
  { address: "::", prefix: 8, name: "reserved, IPv4-compatible and IPv4-translated forms included (::/8)" },
];

const compiled = (ranges: readonly SpecialRange[], family: "ipv4" | "ipv6") =>
  ranges.map((range) => {
    const list = new BlockList();
    list.addSubnet(range.address, range.prefix, family);
    return { range, list };
  });

const IPV4 = compiled(IPV4_RANGES, "ipv4");
const IPV6 = compiled(IPV6_RANGES, "ipv6");

/**
 * The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, also written `::ffff:7f00:1` or fully
 * expanded), or undefined for any other address.
 */
export function mappedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6 || !isMappedPrefix(address)) return undefined;
  const last = address.slice(address.lastIndexOf(":") + 1);
  if (isIP(last) === 4) return last;
  const groups = address.split(":");
  const high = Number.parseInt(groups[groups.length - 2] || "0", 16);
  const low = Number.parseInt(groups[groups.length - 1] || "0", 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

const MAPPED = (() => {
  const list = new BlockList();
  list.addSubnet("::ffff:0:0", 96, "ipv6");
  return list;
})();

/** True when the IPv6 text is in ::ffff:0:0/96 (BlockList parses every spelling). */
function isMappedPrefix(address: string): boolean {
  try {
    return MAPPED.check(address, "ipv6");
  } catch {
    return false;
  }
}

/**
 * The special-purpose range `address` is in (its name, for the refusal), or undefined for an ordinary public
 * unicast address. An IPv4-mapped IPv6 address is judged by its IPv4 part (`::ffff:198.51.100.7` is documentation,
 * `::ffff:8.8.8.8` is public). Anything that is not an IP address counts as special (refused).
 */
export function specialPurposeRange(address: string): string | undefined {
  const bare = address.replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 0) return "not an IP address";
  const mapped = mappedIpv4(bare);
  if (mapped !== undefined) {
    const inner = specialPurposeRange(mapped);
    return inner === undefined ? undefined : `IPv4-mapped form of ${inner}`;
  }
  const table = family === 4 ? IPV4 : IPV6;
  return table.find(({ list }) => list.check(bare, family === 4 ? "ipv4" : "ipv6"))?.range.name;
}
