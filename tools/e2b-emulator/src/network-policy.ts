/**
 * Network policy for emulated sandboxes: translates E2B's create options
 * (`allow_internet_access`, `network.allowOut/denyOut`) into a Docker network
 * mode and, when needed, iptables rules keyed on the container's IP.
 */
import { ALL_TRAFFIC, installFirewallRules as installOutboundRules, isIPv4Cidr, type FirewallRule } from "@sbx/emulator-kit";

export { describeFirewallRule, removeFirewallRules, type FirewallRule } from "@sbx/emulator-kit";

/** The `network` object of E2B's create body, as the SDK sends it. */
export interface RequestedNetwork {
  allowOut?: string[];
  denyOut?: string[];
  allowPublicTraffic?: boolean;
  maskRequestHost?: string;
  [other: string]: unknown;
}

/** What the emulator will enforce for one sandbox. */
export interface NetworkPolicyPlan {
  /** "none": no network interface at all; "network": attached to the emulator's Docker network. */
  mode: "none" | "network";
  /** IPv4 addresses/CIDRs reachable despite `denyOut`. */
  allowOut: string[];
  /** IPv4 addresses/CIDRs that are blocked; "0.0.0.0/0" blocks everything not allowed. */
  denyOut: string[];
  /** True when iptables rules must be installed. */
  needsFirewall: boolean;
}

/** Error for a policy the emulator cannot enforce honestly (reported as HTTP 400). */
export class UnsupportedNetworkPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedNetworkPolicyError";
  }
}

function validateDestination(value: string, field: string): string {
  if (!isIPv4Cidr(value.trim())) {
    throw new UnsupportedNetworkPolicyError(
      `network.${field} entry ${JSON.stringify(value)} is not an IPv4 address or CIDR: ` +
        "the E2B emulator only enforces IP/CIDR allowlists (real E2B also matches domain names by SNI/Host header)",
    );
  }
  return value.trim();
}

/** Derives the enforcement plan from the create body; throws UnsupportedNetworkPolicyError for domains. */
export function planNetworkPolicy(allowInternetAccess: boolean | undefined, network: RequestedNetwork | undefined): NetworkPolicyPlan {
  const allowOut = (network?.allowOut ?? []).map((value) => validateDestination(value, "allowOut"));
  const denyOut = (network?.denyOut ?? []).map((value) => validateDestination(value, "denyOut"));
  if (allowInternetAccess === false && !denyOut.includes(ALL_TRAFFIC)) denyOut.push(ALL_TRAFFIC);
  if (denyOut.length === 0) return { mode: "network", allowOut, denyOut, needsFirewall: false };
  if (denyOut.includes(ALL_TRAFFIC) && allowOut.length === 0) {
    return { mode: "none", allowOut, denyOut, needsFirewall: false };
  }
  return { mode: "network", allowOut, denyOut, needsFirewall: true };
}

/**
 * Installs rules so traffic from `containerAddress` only reaches what the plan allows (iptables in DOCKER-USER and
 * INPUT). Returns the rules in evaluation order.
 */
export async function installFirewallRules(containerAddress: string, plan: NetworkPolicyPlan, comment: string): Promise<FirewallRule[]> {
  return installOutboundRules(containerAddress, { allowed: plan.allowOut, denied: plan.denyOut }, comment);
}
