import { CapabilityNotSupportedError, InvalidArgumentError } from "../errors/index.js";
import { backendsSupporting } from "../backends/backend-registry.js";
import { parseAllowlistEntry, type AllowlistEntry } from "./network-allowlist.js";

/**
 * One `network.allow` entry in the form hosted backends' egress rules take (E2B's `allowOut`, Modal's CIDR and domain
 * allowlists): an IPv4 address, an IPv4 CIDR range, or a domain name (exact, or one leading `*.` wildcard label).
 * `value` is lower-cased, trimmed and without a trailing dot.
 */
export interface AllowlistHost {
  readonly kind: "ipv4" | "ipv4-cidr" | "domain";
  readonly value: string;
}

/** What differs between backends when `parseAllowlistHost` reads an entry. */
export interface AllowlistHostRules {
  /** The backend named in the errors, for example `"e2b"`. */
  readonly backend: string;
  /** Why an IPv6 entry is refused, in the backend's terms (for example "E2B's egress rules are IPv4 only"). */
  readonly ipv6Refusal: string;
  /** What the backend accepts as a wildcard, said when an entry has another (`Modal only accepts a single leading wildcard label, such as "*.example.com"`). */
  readonly wildcardRule: string;
  /** Whether a single-label name (`"intranet"`) is a domain entry. Default false: a domain needs a dot. */
  readonly singleLabelNames?: boolean;
}

/**
 * Reads the `index`th `network.allow` entry for a backend whose egress rules take IPv4 addresses and ranges and
 * domain names: the shared grammar (`parseAllowlistEntry`), narrowed to what such rules can enforce. Nothing is approximated: IPv6 is refused with `CapabilityNotSupportedError` (naming the backends that
 * can), anything that is not a host (URLs, ports, inner or bare wildcards, bad names) with `InvalidArgumentError`
 * naming the field `network.allow.<index>`. For adapter authors (`@sbx/core/adapter`).
 */
export function parseAllowlistHost(entry: string, index: number, rules: AllowlistHostRules): AllowlistHost {
  const field = `network.allow.${index}`;
  const value = entry.trim().toLowerCase().replace(/\.$/, "");
  const invalid = () => {
    const hint = value.includes("*")
      ? rules.wildcardRule
      : value.includes("://") || value.includes(":") || value.includes("/")
        ? "give a host name, an IPv4 address or an IPv4 CIDR range, without scheme, port or path"
        : "not a host name, IPv4 address or IPv4 CIDR range";
    return new InvalidArgumentError({ field, backend: rules.backend, message: `Invalid ${field} ${JSON.stringify(entry)}: ${hint}.` });
  };
  let parsed: AllowlistEntry;
  try {
    parsed = parseAllowlistEntry(entry, { index, backend: rules.backend });
  } catch {
    throw invalid();
  }
  if (parsed.port !== null) throw invalid();
  if (parsed.kind === "address" && parsed.family === "ipv6") {
    throw new CapabilityNotSupportedError({
      capability: "EGRESS_ALLOWLIST",
      backend: rules.backend,
      supportedBy: backendsSupporting("EGRESS_ALLOWLIST", rules.backend),
      detail: `${field} is the IPv6 entry ${JSON.stringify(entry)}: ${rules.ipv6Refusal}, so it was refused rather than approximated`,
    });
  }
  if (parsed.kind === "address")
    return parsed.range ? { kind: "ipv4-cidr", value: `${parsed.address}/${parsed.prefix}` } : { kind: "ipv4", value: parsed.address };
  if (parsed.kind === "suffix") return { kind: "domain", value: `*.${parsed.suffix}` };
  if (!(rules.singleLabelNames ?? false) && !parsed.host.includes(".")) throw invalid();
  return { kind: "domain", value: parsed.host };
}
