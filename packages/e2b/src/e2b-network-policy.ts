import { backendsSupporting, CapabilityNotSupportedError, InvalidArgumentError, type NetworkPolicy, type PolicyRecord } from "@sbx/core";
import { isIPv4, isIPv6 } from "node:net";

/** E2B's "all IPv4 traffic" sentinel (`ALL_TRAFFIC` in the SDK). */
export const E2B_ALL_TRAFFIC = "0.0.0.0/0";

/** The egress fields sent in E2B's create request, exactly as passed to `Sandbox.create`. */
export interface E2BNetworkRequest {
  /** E2B's switch for internet access; `false` is the same as `denyOut: ["0.0.0.0/0"]`. Left out with an allowlist, where `denyOut` says it. */
  readonly allowInternetAccess?: boolean;
  /** E2B's egress rules: `allowOut` entries take precedence over `denyOut`. Absent for full access. */
  readonly network?: { readonly allowOut: string[]; readonly denyOut: string[] };
}

/** What the adapter sends for a policy, and the audit record that describes it. */
export interface E2BNetworkPlan {
  /** Fields to spread into `Sandbox.create` options. */
  readonly request: E2BNetworkRequest;
  /** The audit record: requested, applied, and how E2B enforces it. */
  readonly record: PolicyRecord<NetworkPolicy>;
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isHostName(value: string): boolean {
  if (value.length > 253) return false;
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
 * Maps one allowlist entry onto an E2B `allowOut` entry, or refuses it. E2B accepts IPv4 addresses, IPv4 CIDR
 * ranges, exact domain names and a single leading wildcard (`*.example.com`, which matches subdomains at any
 * depth but not the apex). IPv6 is refused (E2B's egress rules are IPv4), as is anything that is not a host
 * (URLs, ports, inner wildcards): nothing is approximated.
 */
export function toAllowOutEntry(entry: string, index: number): string {
  const field = `network.allow.${index}`;
  const value = entry.trim().toLowerCase().replace(/\.$/, "");
  if (isIPv4(value) || isIPv4Cidr(value)) return value;
  if (isIPv6Form(value)) {
    throw new CapabilityNotSupportedError({
      capability: "EGRESS_ALLOWLIST",
      backend: "e2b",
      supportedBy: backendsSupporting("EGRESS_ALLOWLIST", "e2b"),
      detail: `${field} is the IPv6 entry ${JSON.stringify(entry)}; E2B's egress rules (allowOut/denyOut) are IPv4 only, so it was refused rather than approximated`,
    });
  }
  if (value.startsWith("*.") && isHostName(value.slice(2)) && value.slice(2).includes(".")) return value;
  if (isHostName(value)) return value;
  const hint = value.includes("*")
    ? "E2B only accepts a single leading wildcard label, such as \"*.example.com\" (subdomains at any depth, not the apex)"
    : value.includes("://") || value.includes(":") || value.includes("/")
      ? "give a host name, an IPv4 address or an IPv4 CIDR range, without scheme, port or path"
      : "not a host name, IPv4 address or IPv4 CIDR range";
  throw new InvalidArgumentError({ field, backend: "e2b", message: `Invalid ${field} ${JSON.stringify(entry)}: ${hint}.` });
}

/**
 * Turns the sbx egress policy into E2B's create fields. E2B allows all egress by default, so the policy is
 * always sent explicitly:
 * - deny: `allowInternetAccess: false` and `network.denyOut: ["0.0.0.0/0"]`;
 * - allow: `allowInternetAccess: true`, no rules;
 * - deny with an allowlist: `network.allowOut: [...]` and `network.denyOut: ["0.0.0.0/0"]` (E2B gives allowOut
 *   precedence over denyOut; this is the form E2B documents for allowlists).
 */
export function planE2BNetwork(policy: NetworkPolicy): E2BNetworkPlan {
  const requested: NetworkPolicy = policy.allow && policy.allow.length > 0 ? { egress: policy.egress, allow: [...policy.allow] } : { egress: policy.egress };
  if (policy.egress === "allow") {
    return {
      request: { allowInternetAccess: true },
      record: {
        requested,
        applied: { egress: "allow" },
        enforcement: "E2B create request with allowInternetAccess: true and no egress rules: all outbound traffic is allowed.",
      },
    };
  }
  const allowOut = (policy.allow ?? []).map((entry, index) => toAllowOutEntry(entry, index));
  const unique = [...new Set(allowOut)];
  if (unique.length === 0) {
    return {
      request: { allowInternetAccess: false, network: { allowOut: [], denyOut: [E2B_ALL_TRAFFIC] } },
      record: {
        requested,
        applied: { egress: "deny" },
        enforcement: "E2B create request with allowInternetAccess: false and network.denyOut [\"0.0.0.0/0\"]: E2B's sandbox firewall drops all outbound traffic.",
      },
    };
  }
  const hasDomains = unique.some((entry) => !isIPv4(entry) && !isIPv4Cidr(entry));
  return {
    request: { network: { allowOut: unique, denyOut: [E2B_ALL_TRAFFIC] } },
    record: {
      requested,
      applied: { egress: "deny", allow: unique },
      enforcement:
        `E2B create request with network.allowOut ${JSON.stringify(unique)} and network.denyOut ["0.0.0.0/0"]: ` +
        "E2B's sandbox firewall drops outbound traffic except to the allowOut entries (allowOut takes precedence)." +
        (hasDomains ? " Domain entries are matched by E2B's egress proxy on the HTTP Host header or TLS SNI; \"*.\" entries match subdomains at any depth, not the apex." : ""),
    },
  };
}
