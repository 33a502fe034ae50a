/**
 * Network policy for emulated sandboxes: Modal's `Sandbox.network_access` (field 22 of the create request) turned
 * into a Docker network mode and, for CIDR allowlists, iptables rules keyed on the container's IP.
 *
 * - BLOCKED (blockNetwork: true) → the container has no network interface at all (`NetworkMode: "none"`).
 * - OPEN → the container joins the emulator's bridge network.
 * - ALLOWLIST → it joins the network and iptables rules let it reach only the IPv4 CIDRs listed; everything else is
 *   REJECTed. Domain entries are recorded but NOT enforced (real Modal matches them in its egress proxy on TLS SNI
 *   and the HTTP Host header); here traffic to a listed domain is rejected like any other, so the emulator is
 *   stricter than Modal, never looser. IPv6 entries are recorded only (the emulator's network is IPv4).
 */
import { ALL_TRAFFIC, installFirewallRules as installOutboundRules, isIPv4Cidr, type FirewallRule } from "@sbx/emulator-kit";

export { describeFirewallRule, removeFirewallRules, type FirewallRule } from "@sbx/emulator-kit";

/** Modal's `NetworkAccess.network_access_type`. */
export const NETWORK_ACCESS_TYPE = { UNSPECIFIED: 0, OPEN: 1, BLOCKED: 2, ALLOWLIST: 3 } as const;

/** `NetworkAccess` as the SDK sends it (decoded by the bundled codec). */
export interface NetworkAccessMessage {
  networkAccessType?: number;
  allowedCidrs?: string[];
  allowedDomains?: string[];
}

/** What the emulator enforces for one sandbox. */
export interface EmulatorNetworkPlan {
  /** `"none"`: no network interface; `"network"`: attached to the emulator's Docker network. */
  readonly mode: "none" | "network";
  /** `"OPEN"`, `"BLOCKED"` or `"ALLOWLIST"`, as requested. */
  readonly type: "OPEN" | "BLOCKED" | "ALLOWLIST";
  /** IPv4 CIDRs reachable (enforced with iptables). */
  readonly enforcedCidrs: string[];
  /** Entries that were requested but are not enforced here (domains, IPv6), with the reason. */
  readonly notEnforced: Array<{ entry: string; reason: string }>;
  /** True when iptables rules must be installed. */
  readonly needsFirewall: boolean;
}

/** Derives the enforcement plan from the create request's `network_access`. */
export function planNetwork(access: NetworkAccessMessage | undefined): EmulatorNetworkPlan {
  const type = access?.networkAccessType ?? NETWORK_ACCESS_TYPE.OPEN;
  if (type === NETWORK_ACCESS_TYPE.BLOCKED) return { mode: "none", type: "BLOCKED", enforcedCidrs: [], notEnforced: [], needsFirewall: false };
  if (type !== NETWORK_ACCESS_TYPE.ALLOWLIST) return { mode: "network", type: "OPEN", enforcedCidrs: [], notEnforced: [], needsFirewall: false };
  const enforcedCidrs: string[] = [];
  const notEnforced: Array<{ entry: string; reason: string }> = [];
  for (const cidr of access?.allowedCidrs ?? []) {
    if (isIPv4Cidr(cidr)) enforcedCidrs.push(cidr);
    else
      notEnforced.push({
        entry: cidr,
        reason: "not an IPv4 CIDR: the emulator's Docker network is IPv4 only, so this traffic is rejected (stricter than Modal)",
      });
  }
  for (const domain of access?.allowedDomains ?? []) {
    notEnforced.push({
      entry: domain,
      reason:
        "domain allowlists are not enforced by the emulator (Modal matches them on TLS SNI / HTTP Host in its egress proxy); traffic to it is rejected (stricter than Modal)",
    });
  }
  return { mode: "network", type: "ALLOWLIST", enforcedCidrs, notEnforced, needsFirewall: true };
}

/**
 * Installs rules so traffic from `containerAddress` reaches only the plan's CIDRs and everything else is rejected
 * (iptables in DOCKER-USER and INPUT). Returns the rules in evaluation order.
 */
export async function installFirewallRules(containerAddress: string, plan: EmulatorNetworkPlan, comment: string): Promise<FirewallRule[]> {
  return installOutboundRules(containerAddress, { allowed: plan.enforcedCidrs, denied: [ALL_TRAFFIC] }, comment);
}
