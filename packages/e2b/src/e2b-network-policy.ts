import type { NetworkPolicy, PolicyRecord } from "@sbx/core";
import { parseAllowlistHost, type AllowlistHostRules } from "@sbx/core/adapter";

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

/** How E2B's egress rules read an allowlist entry (core's `parseAllowlistHost`). */
const E2B_ALLOWLIST_RULES: AllowlistHostRules = {
  backend: "e2b",
  ipv6Refusal: "E2B's egress rules (allowOut/denyOut) are IPv4 only",
  wildcardRule: 'E2B only accepts a single leading wildcard label, such as "*.example.com" (subdomains at any depth, not the apex)',
  singleLabelNames: true,
};

/**
 * Maps one allowlist entry onto an E2B `allowOut` entry, or refuses it. E2B accepts IPv4 addresses, IPv4 CIDR
 * ranges, exact domain names and a single leading wildcard (`*.example.com`, which matches subdomains at any
 * depth but not the apex). IPv6 is refused (E2B's egress rules are IPv4), as is anything that is not a host
 * (URLs, ports, inner wildcards): nothing is approximated.
 */
export function toAllowOutEntry(entry: string, index: number): string {
  return parseAllowlistHost(entry, index, E2B_ALLOWLIST_RULES).value;
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
  const requested: NetworkPolicy =
    policy.allow && policy.allow.length > 0 ? { egress: policy.egress, allow: [...policy.allow] } : { egress: policy.egress };
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
  const hosts = (policy.allow ?? []).map((entry, index) => parseAllowlistHost(entry, index, E2B_ALLOWLIST_RULES));
  const unique = [...new Set(hosts.map((host) => host.value))];
  if (unique.length === 0) {
    return {
      request: { allowInternetAccess: false, network: { allowOut: [], denyOut: [E2B_ALL_TRAFFIC] } },
      record: {
        requested,
        applied: { egress: "deny" },
        enforcement:
          'E2B create request with allowInternetAccess: false and network.denyOut ["0.0.0.0/0"]: E2B\'s sandbox firewall drops all outbound traffic.',
      },
    };
  }
  const hasDomains = hosts.some((host) => host.kind === "domain");
  return {
    request: { network: { allowOut: unique, denyOut: [E2B_ALL_TRAFFIC] } },
    record: {
      requested,
      applied: { egress: "deny", allow: unique },
      enforcement:
        `E2B create request with network.allowOut ${JSON.stringify(unique)} and network.denyOut ["0.0.0.0/0"]: ` +
        "E2B's sandbox firewall drops outbound traffic except to the allowOut entries (allowOut takes precedence)." +
        (hasDomains
          ? ' Domain entries are matched by E2B\'s egress proxy on the HTTP Host header or TLS SNI; "*." entries match subdomains at any depth, not the apex.'
          : ""),
    },
  };
}
