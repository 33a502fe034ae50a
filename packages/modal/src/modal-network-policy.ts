import { backendsSupporting, CapabilityNotSupportedError, InvalidArgumentError, type NetworkPolicy, type PolicyRecord } from "@sbx/core";
import { isIPv4, isIPv6 } from "node:net";

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

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isHostName(value: string): boolean {
  if (value.length > 253 || !value.includes(".")) return false;
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

function refuse(field: string, entry: string, detail: string): never {
  throw new CapabilityNotSupportedError({
    capability: "EGRESS_ALLOWLIST",
    backend: "modal",
    supportedBy: backendsSupporting("EGRESS_ALLOWLIST", "modal"),
    detail: `${field} is ${JSON.stringify(entry)}: ${detail}; it was refused rather than approximated`,
  });
}

/** One allowlist entry, classified: an IPv4 CIDR (addresses become /32) or a domain (exact or `*.suffix`). */
export function classifyAllowEntry(entry: string, index: number): { kind: "cidr" | "domain"; value: string } {
  const field = `network.allow.${index}`;
  const value = entry.trim().toLowerCase().replace(/\.$/, "");
  if (isIPv4(value)) return { kind: "cidr", value: `${value}/32` };
  if (isIPv4Cidr(value)) return { kind: "cidr", value };
  if (isIPv6Form(value)) refuse(field, entry, "Modal's outboundCidrAllowlist is documented for IPv4 ranges only");
  if (value.startsWith("*.") && isHostName(value.slice(2))) return { kind: "domain", value };
  if (isHostName(value)) return { kind: "domain", value };
  const hint = value.includes("*")
    ? "Modal only accepts a single leading wildcard label, such as \"*.example.com\""
    : value.includes("://") || value.includes(":") || value.includes("/")
      ? "give a host name, an IPv4 address or an IPv4 CIDR range, without scheme, port or path"
      : "not a host name, IPv4 address or IPv4 CIDR range";
  throw new InvalidArgumentError({ field, backend: "modal", message: `Invalid ${field} ${JSON.stringify(entry)}: ${hint}.` });
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
  const requested: NetworkPolicy = policy.allow && policy.allow.length > 0 ? { egress: policy.egress, allow: [...policy.allow] } : { egress: policy.egress };
  if (policy.egress === "allow") {
    return {
      request: {},
      record: { requested, applied: { egress: "allow" }, enforcement: "Modal create request without egress restrictions (network_access OPEN): all outbound traffic is allowed." },
    };
  }
  const entries = (policy.allow ?? []).map((entry, index) => ({ ...classifyAllowEntry(entry, index), index, entry }));
  if (entries.length === 0) {
    return {
      request: { blockNetwork: true },
      record: { requested, applied: { egress: "deny" }, enforcement: "Modal create request with blockNetwork: true (network_access BLOCKED): Modal gives the sandbox no outbound network access at all." },
    };
  }
  const cidrs = [...new Set(entries.filter((entry) => entry.kind === "cidr").map((entry) => entry.value))];
  const domains = [...new Set(entries.filter((entry) => entry.kind === "domain").map((entry) => entry.value))];
  for (const entry of entries) {
    if (entry.kind === "domain" && entry.value.startsWith("*.") && !domains.includes(entry.value.slice(2))) {
      refuse(`network.allow.${entry.index}`, entry.entry, `Modal's outboundDomainAllowlist also matches the apex ${JSON.stringify(entry.value.slice(2))} for a "*." entry, which would allow more than asked; add ${JSON.stringify(entry.value.slice(2))} to the allowlist as well if that is acceptable`);
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
