import { BlockList, isIP } from "node:net";
import { InvalidArgumentError } from "@sbx/core";
import { specialPurposeRange } from "./special-purpose-addresses.js";

/** One parsed allowlist entry. */
export type AllowlistEntry =
  | { readonly kind: "host"; readonly host: string; readonly port: number | null; readonly text: string }
  | { readonly kind: "suffix"; readonly suffix: string; readonly port: number | null; readonly text: string }
  | {
      readonly kind: "address";
      readonly address: string;
      readonly prefix: number;
      readonly family: "ipv4" | "ipv6";
      readonly port: number | null;
      readonly text: string;
    };

/** A compiled allowlist: the entries, the default ports, and a matcher. */
export interface Allowlist {
  readonly entries: readonly AllowlistEntry[];
  /** Ports allowed for an entry that names none. */
  readonly defaultPorts: readonly number[];
  /** True when a request for `host:port` (a name or an IP literal, as the client asked) is allowed. */
  allows(host: string, port: number): boolean;
  /** True when an address the proxy resolved is covered by an IP/CIDR entry (private ranges need one). */
  coversAddress(address: string): boolean;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower case, no trailing dot, brackets gone from IPv6: the form names are compared in. */
export function normalizeHost(host: string): string {
  let normalized = host.trim().toLowerCase();
  if (normalized.startsWith("[") && normalized.endsWith("]")) normalized = normalized.slice(1, -1);
  if (normalized.endsWith(".")) normalized = normalized.slice(0, -1);
  return normalized;
}

/** True for a syntactically valid DNS name (ASCII or punycode labels; no IDN in Unicode form). */
export function isHostName(host: string): boolean {
  return host.length > 0 && host.length <= 253 && host.split(".").every((label) => LABEL.test(label));
}

function invalid(entry: string, why: string): InvalidArgumentError {
  return new InvalidArgumentError({
    field: "network.allow",
    backend: "docker",
    message: `Invalid network.allow entry ${JSON.stringify(entry)}: ${why}. Entries are exact hosts ("pypi.org"), wildcards ("*.pythonhosted.org"), IP addresses or CIDR ranges ("10.0.0.0/8"), each optionally with ":port" (IPv6 with a port in brackets: "[::1]:8443").`,
  });
}

function parsePort(entry: string, text: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw invalid(entry, `port ${JSON.stringify(text)} is not 1-65535`);
  return port;
}

/** Parses one entry; throws `InvalidArgumentError` naming it. */
export function parseEntry(entry: string): AllowlistEntry {
  let rest = entry.trim();
  let port: number | null = null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?(\/\d+)?$/.exec(rest);
  if (bracketed) {
    rest = bracketed[1]! + (bracketed[3] ?? "");
    if (bracketed[2] !== undefined) port = parsePort(entry, bracketed[2]);
  } else if ((rest.match(/:/g) ?? []).length === 1) {
    const at = rest.lastIndexOf(":");
    port = parsePort(entry, rest.slice(at + 1));
    rest = rest.slice(0, at);
  }
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(rest);
  const addressPart = cidr ? cidr[1]! : rest;
  const family = isIP(addressPart);
  if (family !== 0) {
    const prefix = cidr ? Number(cidr[2]) : family === 4 ? 32 : 128;
    if (prefix > (family === 4 ? 32 : 128)) throw invalid(entry, `prefix /${prefix} is too long for IPv${family}`);
    return { kind: "address", address: addressPart.toLowerCase(), prefix, family: family === 4 ? "ipv4" : "ipv6", port, text: entry };
  }
  if (cidr) throw invalid(entry, "a CIDR range needs an IP address before the slash");
  const host = normalizeHost(rest);
  if (host.startsWith("*.")) {
    const suffix = host.slice(2);
    if (!isHostName(suffix) || !suffix.includes(".")) throw invalid(entry, 'a wildcard needs a name with at least two labels after "*."');
    return { kind: "suffix", suffix, port, text: entry };
  }
  if (!isHostName(host)) throw invalid(entry, "not a host name, wildcard, IP address or CIDR range");
  return { kind: "host", host, port, text: entry };
}

/** Compiles entries (validated; duplicates kept) with the ports allowed when an entry names none. */
export function compileAllowlist(entries: readonly string[], defaultPorts: readonly number[]): Allowlist {
  const parsed = entries.map(parseEntry);
  const portAllowed = (entry: AllowlistEntry, port: number) => (entry.port === null ? defaultPorts.includes(port) : entry.port === port);
  const blockListOf = (entry: AllowlistEntry & { kind: "address" }) => {
    const list = new BlockList();
    list.addSubnet(entry.address, entry.prefix, entry.family);
    return list;
  };
  const addressEntries = parsed
    .filter((entry): entry is AllowlistEntry & { kind: "address" } => entry.kind === "address")
    .map((entry) => ({ entry, list: blockListOf(entry) }));
  const addressMatches = (list: BlockList, address: string) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6");
  };
  return {
    entries: parsed,
    defaultPorts,
    allows(requested, port) {
      const host = normalizeHost(requested);
      if (isIP(host) !== 0) return addressEntries.some(({ entry, list }) => portAllowed(entry, port) && addressMatches(list, host));
      return parsed.some(
        (entry) =>
          portAllowed(entry, port) &&
          ((entry.kind === "host" && entry.host === host) || (entry.kind === "suffix" && host.endsWith(`.${entry.suffix}`))),
      );
    },
    coversAddress(address) {
      return addressEntries.some(({ list }) => addressMatches(list, address));
    },
  };
}

/**
 * True when `address` is not an ordinary public unicast address: in a range of the IANA special-purpose registries
 * (IPv4-mapped IPv6 forms judged by the IPv4 address inside; see special-purpose-addresses.ts). The proxy refuses such
 * an address unless an IP/CIDR entry covers it; the host's own addresses are refused as well (host-addresses.ts).
 */
export function isNonPublicAddress(address: string): boolean {
  return specialPurposeRange(address) !== undefined;
}
