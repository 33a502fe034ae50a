import { compileAllowlist as compileEntries, type Allowlist as CoreAllowlist } from "@sbx/core/adapter";
import { specialPurposeRange } from "./special-purpose-addresses.js";

export { normalizeHost, type AllowlistEntry } from "@sbx/core/adapter";

/** A compiled allowlist as the Docker proxy applies it: core's, with the ports an entry without its own allows. */
export interface Allowlist extends CoreAllowlist {
  /** Ports allowed for an entry that names none (the `egressPorts` setting). */
  readonly defaultPorts: readonly number[];
}

/**
 * Compiles `network.allow` by core's one grammar (`compileAllowlist` of `@sbx/core/adapter`: exact hosts, wildcards,
 * IP/CIDR entries, optional ports), refusing an invalid entry with `InvalidArgumentError` naming `network.allow.<index>`.
 */
export function compileAllowlist(entries: readonly string[], defaultPorts: readonly number[]): Allowlist {
  return { ...compileEntries(entries, { backend: "docker", defaultPorts }), defaultPorts };
}

/**
 * True when `address` is not an ordinary public unicast address: in a range of the IANA special-purpose registries
 * (IPv4-mapped IPv6 forms judged by the IPv4 address inside; see special-purpose-addresses.ts). The proxy refuses such
 * an address unless an IP/CIDR entry covers it; the host's own addresses are refused as well (host-addresses.ts).
 */
export function isNonPublicAddress(address: string): boolean {
  return specialPurposeRange(address) !== undefined;
}
