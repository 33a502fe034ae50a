import { BlockList, isIP } from "node:net";
import { InvalidArgumentError } from "../errors/index.js";

/**
 * One `network.allow` entry, read by the one grammar every backend shares (`parseAllowlistEntry`):
 * - `host`: an exact name (`"pypi.org"`; lower case, without a trailing dot), which matches only itself;
 * - `suffix`: a wildcard (`"*.pythonhosted.org"`), which matches any deeper name but never the bare suffix;
 * - `address`: an IP address or CIDR range (`"10.0.0.0/8"`, `"fd00::1"`), which matches IP literals only (a name is
 *   never resolved to check it against an address entry).
 * Each may carry a `:port` (IPv6 with a port in brackets: `"[::1]:8443"`); `port` is null when it names none.
 */
export type AllowlistEntry =
  | { readonly kind: "host"; readonly host: string; readonly port: number | null; readonly text: string }
  | { readonly kind: "suffix"; readonly suffix: string; readonly port: number | null; readonly text: string }
  | {
      readonly kind: "address";
      readonly address: string;
      /** The range's prefix length; 32 (IPv4) or 128 (IPv6) for a single address. */
      readonly prefix: number;
      /** Whether the entry was written as a range (`/prefix`). */
      readonly range: boolean;
      readonly family: "ipv4" | "ipv6";
      readonly port: number | null;
      readonly text: string;
    };

/** Where an entry comes from, for the `InvalidArgumentError` that refuses it. */
export interface AllowlistEntryOrigin {
  /** Position in `network.allow`; the error names the field `network.allow.<index>`. */
  readonly index: number;
  /** The backend named in the error, for example `"docker"`. */
  readonly backend: string;
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower case, no surrounding space, no trailing dot, brackets gone from IPv6: the form names are compared in. */
export function normalizeHost(host: string): string {
  let normalized = host.trim().toLowerCase();
  if (normalized.startsWith("[") && normalized.endsWith("]")) normalized = normalized.slice(1, -1);
  if (normalized.endsWith(".")) normalized = normalized.slice(0, -1);
  return normalized;
}

/**
 * True for a syntactically valid DNS name in normalized form: ASCII or punycode labels (no IDN in Unicode form), at most
 * 253 characters, and a last label that is not all digits (so `"10.0.0.999"` is not a name).
 */
export function isHostName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split(".");
  return labels.every((label) => HOST_LABEL.test(label)) && !/^\d+$/.test(labels[labels.length - 1]!);
}

function refusal(entry: string, origin: AllowlistEntryOrigin, why: string): InvalidArgumentError {
  const field = `network.allow.${origin.index}`;
  return new InvalidArgumentError({
    field,
    backend: origin.backend,
    message: `Invalid ${field} ${JSON.stringify(entry)}: ${why}. Entries are exact hosts ("pypi.org"), wildcards ("*.pythonhosted.org"), IP addresses or CIDR ranges ("10.0.0.0/8"), each optionally with ":port" (IPv6 with a port in brackets: "[::1]:8443").`,
  });
}

function parsePort(entry: string, text: string, origin: AllowlistEntryOrigin): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw refusal(entry, origin, `port ${JSON.stringify(text)} is not 1-65535`);
  return port;
}

/**
 * Reads one `network.allow` entry by the grammar every backend shares (see `AllowlistEntry`). Throws
 * `InvalidArgumentError` naming the field `network.allow.<index>` for anything else (URLs, inner or bare wildcards,
 * a wildcard over a single label, bad names, ports outside 1-65535, prefixes too long). A backend whose egress rules
 * take less (no ports, no IPv6) refuses the rest itself, as `parseAllowlistHost` does: nothing is approximated.
 */
export function parseAllowlistEntry(entry: string, origin: AllowlistEntryOrigin): AllowlistEntry {
  let rest = entry.trim().toLowerCase();
  let port: number | null = null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?(\/\d+)?$/.exec(rest);
  if (bracketed) {
    rest = bracketed[1]! + (bracketed[3] ?? "");
    if (bracketed[2] !== undefined) port = parsePort(entry, bracketed[2], origin);
  } else if ((rest.match(/:/g) ?? []).length === 1) {
    const at = rest.lastIndexOf(":");
    port = parsePort(entry, rest.slice(at + 1), origin);
    rest = rest.slice(0, at);
  }
  if (rest.endsWith(".")) rest = rest.slice(0, -1);
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(rest);
  const addressPart = cidr ? cidr[1]! : rest;
  const family = isIP(addressPart);
  if (family !== 0) {
    const longest = family === 4 ? 32 : 128;
    const prefix = cidr ? Number(cidr[2]) : longest;
    if (prefix > longest) throw refusal(entry, origin, `prefix /${prefix} is too long for IPv${family}`);
    return { kind: "address", address: addressPart, prefix, range: cidr !== null, family: family === 4 ? "ipv4" : "ipv6", port, text: entry };
  }
  if (cidr) throw refusal(entry, origin, "a CIDR range needs an IP address before the slash");
  const host = normalizeHost(rest);
  if (host.startsWith("*.")) {
    const suffix = host.slice(2);
    if (!isHostName(suffix) || !suffix.includes(".")) throw refusal(entry, origin, 'a wildcard needs a name with at least two labels after "*."');
    return { kind: "suffix", suffix, port, text: entry };
  }
  if (!isHostName(host)) throw refusal(entry, origin, "not a host name, wildcard, IP address or CIDR range");
  return { kind: "host", host, port, text: entry };
}

/** A compiled `network.allow` list: the parsed entries and the matcher every backend that enforces it in sbx uses. */
export interface Allowlist {
  readonly entries: readonly AllowlistEntry[];
  /** Ports allowed for an entry that names none; undefined: every port. */
  readonly defaultPorts: readonly number[] | undefined;
  /** True when a request for `host` (a name or an IP literal, as the client asked) on `port` is allowed. */
  allows(host: string, port: number): boolean;
  /** True when an address sbx resolved is covered by an IP/CIDR entry (private ranges need one). */
  coversAddress(address: string): boolean;
}

/** How `compileAllowlist` reads and applies the entries. */
export interface CompileAllowlistOptions {
  /** The backend named in the errors. */
  readonly backend: string;
  /** Ports an entry without its own `:port` allows. Default: every port (a backend whose egress control cannot see ports says so in its audit record). */
  readonly defaultPorts?: readonly number[];
}

function blockListOf(entry: AllowlistEntry & { kind: "address" }): BlockList {
  const list = new BlockList();
  list.addSubnet(entry.address, entry.prefix, entry.family);
  return list;
}

function addressMatches(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Parses every entry (refusing the first invalid one, named by its index) and returns the matcher: names compare
 * exactly after `normalizeHost`, a wildcard matches deeper names only, IP/CIDR entries match IP literals only.
 */
export function compileAllowlist(entries: readonly string[], options: CompileAllowlistOptions): Allowlist {
  const parsed = entries.map((entry, index) => parseAllowlistEntry(entry, { index, backend: options.backend }));
  const { defaultPorts } = options;
  const portAllowed = (entry: AllowlistEntry, port: number) =>
    entry.port === null ? defaultPorts === undefined || defaultPorts.includes(port) : entry.port === port;
  const addressEntries = parsed
    .filter((entry): entry is AllowlistEntry & { kind: "address" } => entry.kind === "address")
    .map((entry) => ({ entry, list: blockListOf(entry) }));
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
