import { BlockList, isIP } from "node:net";
import { readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { mappedIpv4 } from "./special-purpose-addresses.js";

/** The shape of `os.networkInterfaces()` the check reads (injectable for unit tests). */
export type InterfaceReader = () => Readonly<
  Record<string, ReadonlyArray<{ readonly address: string; readonly family: string | number }> | undefined>
>;

/**
 * Every address this host answers on, by where it was found: `os.networkInterfaces()` (which leaves out interfaces
 * that are down or have no carrier, such as a Docker bridge with no container attached, whose address is still
 * local and reachable), plus, on Linux, the kernel's own lists: the local routing table (`/proc/net/fib_trie`, every
 * IPv4 address the kernel delivers locally) and `/proc/net/if_inet6` (every IPv6 address, whatever the link state).
 */
export function readHostAddresses(): ReturnType<InterfaceReader> {
  const found: Record<string, Array<{ address: string; family: string }>> = {};
  for (const [name, entries] of Object.entries(networkInterfaces()))
    found[name] = (entries ?? []).map((entry) => ({ address: entry.address, family: entry.family }));
  const local = readProc("/proc/net/fib_trie");
  if (local) {
    const addresses = new Set([...local.matchAll(/\|-- (\d+\.\d+\.\d+\.\d+)\n\s+\/32 host LOCAL/g)].map((match) => match[1]!));
    found["the kernel's local routing table"] = [...addresses].map((address) => ({ address, family: "IPv4" }));
  }
  const inet6 = readProc("/proc/net/if_inet6");
  for (const line of inet6?.split("\n") ?? []) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6 || !/^[0-9a-f]{32}$/i.test(fields[0]!)) continue;
    const address = fields[0]!.match(/.{4}/g)!.join(":");
    (found[fields[5]!] ??= []).push({ address, family: "IPv6" });
  }
  return found;
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Why `address` must not be dialled because it is one of this host's own addresses (the proxy runs on the host, so
 * a name resolving to one reaches the host's own services, public addresses included), or undefined. The host's
 * interfaces are read at every call (`readHostAddresses()`), so an address added after the sandbox was created is
 * refused too. An IPv4-mapped IPv6 address is judged by the IPv4 address inside.
 */
export function hostAddressRefusal(address: string, readInterfaces: InterfaceReader = readHostAddresses): string | undefined {
  const bare = address.replace(/%.*$/, "");
  const candidate = mappedIpv4(bare) ?? bare;
  const family = isIP(candidate);
  if (family === 0) return undefined;
  for (const [name, entries] of Object.entries(readInterfaces())) {
    for (const entry of entries ?? []) {
      const own = entry.address.replace(/%.*$/, "");
      const ownFamily = isIP(own);
      if (ownFamily !== family) continue;
      const list = new BlockList();
      list.addAddress(own, ownFamily === 4 ? "ipv4" : "ipv6");
      if (list.check(candidate, family === 4 ? "ipv4" : "ipv6"))
        return name.startsWith("the kernel") ? `an address of this host (${name})` : `an address bound on this host's interface ${name}`;
    }
  }
  return undefined;
}
