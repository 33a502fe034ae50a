import { BlockList, isIP } from "node:net";

/**
 * Builds a predicate that says whether a host may be reached under an egress allowlist.
 * Entries are host names (`"example.com"`, matched exactly, case-insensitive), wildcard subdomains
 * (`"*.example.com"`, matching any subdomain but not the bare name), IP addresses, or CIDR ranges.
 * Host names are matched as written: a name is never resolved to check it against an IP entry.
 */
export function createHostMatcher(allow: readonly string[]): (host: string) => boolean {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const addresses = new BlockList();
  for (const raw of allow) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, "");
    if (entry.startsWith("*.")) suffixes.push(entry.slice(1));
    else if (entry.includes("/")) {
      const [address, prefix] = entry.split("/");
      const family = isIP(address!);
      if (family !== 0) addresses.addSubnet(address!, Number(prefix), family === 6 ? "ipv6" : "ipv4");
    } else if (isIP(entry) !== 0) addresses.addAddress(entry, isIP(entry) === 6 ? "ipv6" : "ipv4");
    else names.add(entry.replace(/\.$/, ""));
  }
  return (host: string) => {
    const normalised = host
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "");
    const family = isIP(normalised);
    if (family !== 0) return addresses.check(normalised, family === 6 ? "ipv6" : "ipv4");
    if (names.has(normalised)) return true;
    return suffixes.some((suffix) => normalised.endsWith(suffix) && normalised.length > suffix.length);
  };
}
