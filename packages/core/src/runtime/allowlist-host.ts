import { isIPv4, isIPv6 } from "node:net";
import { CapabilityNotSupportedError, InvalidArgumentError } from "../errors/index.js";
import { backendsSupporting } from "../v1/backend-registry.js";

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

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isHostName(value: string, singleLabel: boolean): boolean {
  if (value.length > 253 || (!singleLabel && !value.includes("."))) return false;
  const labels = value.split(".");
  return labels.every((label) => HOST_LABEL.test(label)) && !/^\d+$/.test(labels[labels.length - 1]!);
}

function isIPv4Cidr(value: string): boolean {
  const [address, prefix, ...rest] = value.split("/");
  return rest.length === 0 && isIPv4(address ?? "") && prefix !== undefined && /^\d{1,2}$/.test(prefix) && Number(prefix) <= 32;
}

function isIPv6Form(value: string): boolean {
  const [address, prefix, ...rest] = value.split("/");
  return rest.length === 0 && isIPv6(address ?? "") && (prefix === undefined || /^\d{1,3}$/.test(prefix));
}

/**
 * Reads the `index`th `network.allow` entry for a backend whose egress rules take IPv4 addresses and ranges and
 * domain names. Nothing is approximated: IPv6 is refused with `CapabilityNotSupportedError` (naming the backends that
 * can), anything that is not a host (URLs, ports, inner or bare wildcards, bad names) with `InvalidArgumentError`
 * naming the field `network.allow.<index>`. For adapter authors (`@sbx/core/adapter`).
 */
export function parseAllowlistHost(entry: string, index: number, rules: AllowlistHostRules): AllowlistHost {
  const field = `network.allow.${index}`;
  const value = entry.trim().toLowerCase().replace(/\.$/, "");
  if (isIPv4(value)) return { kind: "ipv4", value };
  if (isIPv4Cidr(value)) return { kind: "ipv4-cidr", value };
  if (isIPv6Form(value)) {
    throw new CapabilityNotSupportedError({
      capability: "EGRESS_ALLOWLIST",
      backend: rules.backend,
      supportedBy: backendsSupporting("EGRESS_ALLOWLIST", rules.backend),
      detail: `${field} is the IPv6 entry ${JSON.stringify(entry)}: ${rules.ipv6Refusal}, so it was refused rather than approximated`,
    });
  }
  if (value.startsWith("*.") && isHostName(value.slice(2), false)) return { kind: "domain", value };
  if (isHostName(value, rules.singleLabelNames ?? false)) return { kind: "domain", value };
  const hint = value.includes("*")
    ? rules.wildcardRule
    : value.includes("://") || value.includes(":") || value.includes("/")
      ? "give a host name, an IPv4 address or an IPv4 CIDR range, without scheme, port or path"
      : "not a host name, IPv4 address or IPv4 CIDR range";
  throw new InvalidArgumentError({ field, backend: rules.backend, message: `Invalid ${field} ${JSON.stringify(entry)}: ${hint}.` });
}
