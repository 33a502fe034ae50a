import { CapabilityNotSupportedError, type NetworkPolicy, type PolicyRecord } from "@sbx/core";
import { backendsSupporting, parseAllowlistHost, type AllowlistHostRules } from "@sbx/core/adapter";

/** The egress fields sent in Modal's create request (`SandboxCreateParams`), exactly as passed to `sandboxes.create`. */
export interface ModalNetworkRequest {
  /** No network at all (Modal's `NetworkAccess` type BLOCKED). */
  readonly blockNetwork?: boolean;
  /** IPv4 CIDR ranges the sandbox may reach (single addresses as /32). With a domain list, Modal's type ALLOWLIST. */
  readonly outboundCidrAllowlist?: string[];
  /** Domains the sandbox may reach, exact names and `*.suffix` wildcards. */
  readonly outboundDomainAllowlist?: string[];
}

/** What the adapter sends for a policy, and the audit record describing it. */
export interface ModalNetworkPlan {
  /** Fields to spread into `sandboxes.create` params. */
  readonly request: ModalNetworkRequest;
  /** The audit record: requested, applied, and how Modal enforces it. */
  readonly record: PolicyRecord<NetworkPolicy>;
}

function refuse(field: string, entry: string, detail: string): never {
  throw new CapabilityNotSupportedError({
    capability: "EGRESS_ALLOWLIST",
    backend: "modal",
    supportedBy: backendsSupporting("EGRESS_ALLOWLIST", "modal"),
    detail: `${field} is ${JSON.stringify(entry)}: ${detail}; it was refused rather than approximated`,
  });
}

/** How Modal's egress allowlists read an entry (core's `parseAllowlistHost`): a domain needs a dot. */
const MODAL_ALLOWLIST_RULES: AllowlistHostRules = {
  backend: "modal",
  ipv6Refusal: "Modal's outboundCidrAllowlist is documented for IPv4 ranges only",
  wildcardRule: 'Modal only accepts a single leading wildcard label, such as "*.example.com"',
};

/** One allowlist entry, classified: an IPv4 CIDR (addresses become /32) or a domain (exact or `*.suffix`). */
export function classifyAllowEntry(entry: string, index: number): { kind: "cidr" | "domain"; value: string } {
  const host = parseAllowlistHost(entry, index, MODAL_ALLOWLIST_RULES);
  if (host.kind === "ipv4") return { kind: "cidr", value: `${host.value}/32` };
  return { kind: host.kind === "domain" ? "domain" : "cidr", value: host.value };
}

/** How Modal enforces each kind of entry, for the audit record. */
export const MODAL_DOMAIN_ENFORCEMENT =
  "Domain entries are enforced by Modal outside the sandbox: HTTPS connections are matched on the TLS server name (SNI) and plain HTTP requests on the Host header; other protocols to a listed domain are not allowed by a domain entry.";

/**
 * Turns the sbx egress policy into Modal's create params. Modal allows all egress by default, so deny is sent
 * explicitly:
 * - deny: `blockNetwork: true` (no network interface traffic leaves the sandbox);
 * - allow: nothing (Modal's default, OPEN);
 * - deny with an allowlist: `outboundCidrAllowlist` (IPv4, addresses as /32) and `outboundDomainAllowlist` (Modal's
 *   ALLOWLIST type). `*.suffix` is only accepted together with the apex `suffix`: Modal's outboundDomainAllowlist
 *   matches the apex for a `*.` entry as well (its outbound-policy migration guide says the newer TLS routes no longer
 *   do), so a wildcard alone would grant more than was asked.
 */
export function planModalNetwork(policy: NetworkPolicy): ModalNetworkPlan {
  const requested: NetworkPolicy =
    policy.allow && policy.allow.length > 0 ? { egress: policy.egress, allow: [...policy.allow] } : { egress: policy.egress };
  if (policy.egress === "allow") {
    return {
      request: {},
      record: {
        requested,
        applied: { egress: "allow" },
        enforcement: "Modal create request without egress restrictions (network_access OPEN): all outbound traffic is allowed.",
      },
    };
  }
  const entries = (policy.allow ?? []).map((entry, index) => ({ ...classifyAllowEntry(entry, index), index, entry }));
  if (entries.length === 0) {
    return {
      request: { blockNetwork: true },
      record: {
        requested,
        applied: { egress: "deny" },
        enforcement:
          "Modal create request with blockNetwork: true (network_access BLOCKED): Modal gives the sandbox no outbound network access at all.",
      },
    };
  }
  const cidrs = [...new Set(entries.filter((entry) => entry.kind === "cidr").map((entry) => entry.value))];
  const domains = [...new Set(entries.filter((entry) => entry.kind === "domain").map((entry) => entry.value))];
  for (const entry of entries) {
    if (entry.kind === "domain" && entry.value.startsWith("*.") && !domains.includes(entry.value.slice(2))) {
      refuse(
        `network.allow.${entry.index}`,
        entry.entry,
        `Modal's outboundDomainAllowlist also matches the apex ${JSON.stringify(entry.value.slice(2))} for a "*." entry, which would allow more than asked; add ${JSON.stringify(entry.value.slice(2))} to the allowlist as well if that is acceptable`,
      );
    }
  }
  const applied = [...cidrs, ...domains];
  return {
    request: { outboundCidrAllowlist: cidrs, outboundDomainAllowlist: domains },
    record: {
      requested,
      applied: { egress: "deny", allow: applied },
      enforcement:
        `Modal create request with outboundCidrAllowlist ${JSON.stringify(cidrs)} and outboundDomainAllowlist ${JSON.stringify(domains)} (network_access ALLOWLIST): Modal drops outbound traffic except to the listed IPv4 ranges and domains.` +
        (domains.length > 0 ? ` ${MODAL_DOMAIN_ENFORCEMENT} "*." entries match subdomains at any depth (and the apex, which is listed too).` : ""),
    },
  };
}
