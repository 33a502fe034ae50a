/**
 * Network policy for emulated sandboxes: translates E2B's create options
 * (`allow_internet_access`, `network.allowOut/denyOut`) into a Docker network
 * mode and, when needed, iptables rules keyed on the container's IP.
 */
import { execFile } from "node:child_process";
import { isIPv4 } from "node:net";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

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

const ALL_TRAFFIC = "0.0.0.0/0";

function validateDestination(value: string, field: string): string {
  const [address, prefix, ...rest] = value.trim().split("/");
  const prefixValid = prefix === undefined || (/^\d{1,2}$/.test(prefix) && Number(prefix) <= 32);
  if (rest.length > 0 || !isIPv4(address ?? "") || !prefixValid) {
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

/** Rejects (fails fast, "No route to host") rather than dropping, so denied connects do not hang. */
const REJECT = ["-j", "REJECT", "--reject-with", "icmp-admin-prohibited"];

/** One installed iptables rule: chain plus the rule specification (without -I/-D). */
export interface FirewallRule {
  chain: string;
  specification: string[];
}

async function iptables(args: string[]): Promise<void> {
  await execFileAsync("iptables", ["-w", "10", ...args]);
}

/** Renders a rule as the `iptables -A` command line an operator would type. */
export function describeFirewallRule(rule: FirewallRule): string {
  return ["iptables", "-A", rule.chain, ...rule.specification].join(" ");
}

/**
 * Installs rules so traffic from `containerAddress` only reaches what the plan
 * allows. Rules go in DOCKER-USER (traffic to other containers and beyond) and
 * INPUT (traffic to the host itself). Returns the rules in evaluation order.
 */
export async function installFirewallRules(
  containerAddress: string,
  plan: NetworkPolicyPlan,
  comment: string,
): Promise<FirewallRule[]> {
  const tag = ["-m", "comment", "--comment", comment];
  const source = ["-s", `${containerAddress}/32`];
  const orderedSpecifications: string[][] = [
    [...source, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", ...tag, "-j", "ACCEPT"],
    ...plan.allowOut.map((destination) => [...source, "-d", destination, ...tag, "-j", "ACCEPT"]),
    ...plan.denyOut.map((destination) =>
      destination === ALL_TRAFFIC ? [...source, ...tag, ...REJECT] : [...source, "-d", destination, ...tag, ...REJECT],
    ),
  ];
  const installed: FirewallRule[] = [];
  try {
    for (const chain of ["DOCKER-USER", "INPUT"]) {
      // Insert in reverse at position 1 so the final order equals orderedSpecifications.
      for (const specification of [...orderedSpecifications].reverse()) {
        await iptables(["-I", chain, "1", ...specification]);
        installed.push({ chain, specification });
      }
    }
  } catch (error) {
    await removeFirewallRules(installed);
    throw error;
  }
  return ["DOCKER-USER", "INPUT"].flatMap((chain) => orderedSpecifications.map((specification) => ({ chain, specification })));
}

/** Deletes previously installed rules; missing rules are ignored. */
export async function removeFirewallRules(rules: FirewallRule[]): Promise<void> {
  for (const rule of rules) {
    await iptables(["-D", rule.chain, ...rule.specification]).catch(() => undefined);
  }
}
