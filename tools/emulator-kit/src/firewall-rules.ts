/**
 * iptables rules that confine one emulated sandbox's outbound traffic, keyed on its container's IPv4 address. Both
 * emulators plan the policy from their own wire format and enforce it here.
 */
import { execFile } from "node:child_process";
import { isIPv4 } from "node:net";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** Every IPv4 destination: as a denied entry it blocks all that is not allowed. */
export const ALL_TRAFFIC = "0.0.0.0/0";

/** Rejects (fails fast, "No route to host") rather than dropping, so denied connects do not hang. */
const REJECT = ["-j", "REJECT", "--reject-with", "icmp-admin-prohibited"];

/** The chains rules go into: DOCKER-USER (other containers and beyond) and INPUT (the host itself). */
const CHAINS = ["DOCKER-USER", "INPUT"] as const;

/** One installed iptables rule: chain plus the rule specification (without -I/-D). */
export interface FirewallRule {
  readonly chain: string;
  readonly specification: string[];
}

/** Destinations one sandbox may and may not reach (IPv4 addresses or CIDRs; {@link ALL_TRAFFIC} denies the rest). */
export interface OutboundRules {
  readonly allowed: readonly string[];
  readonly denied: readonly string[];
}

/** True for an IPv4 address or an IPv4 CIDR (prefix 0–32). */
export function isIPv4Cidr(value: string): boolean {
  const [address, prefix, ...rest] = value.split("/");
  return rest.length === 0 && isIPv4(address ?? "") && (prefix === undefined || (/^\d{1,2}$/.test(prefix) && Number(prefix) <= 32));
}

async function iptables(args: string[]): Promise<void> {
  await execFileAsync("iptables", ["-w", "10", ...args]);
}

/** Renders a rule as the `iptables -A` command line an operator would type. */
export function describeFirewallRule(rule: FirewallRule): string {
  return ["iptables", "-A", rule.chain, ...rule.specification].join(" ");
}

/**
 * Installs rules so traffic from `containerAddress` reaches the allowed destinations and is rejected for the denied
 * ones (replies to established connections always pass). Rules go in DOCKER-USER and INPUT, tagged with `comment`.
 * Returns the rules in evaluation order; on failure the rules installed so far are removed and the error rethrown.
 */
export async function installFirewallRules(containerAddress: string, rules: OutboundRules, comment: string): Promise<FirewallRule[]> {
  const tag = ["-m", "comment", "--comment", comment];
  const source = ["-s", `${containerAddress}/32`];
  const orderedSpecifications: string[][] = [
    [...source, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", ...tag, "-j", "ACCEPT"],
    ...rules.allowed.map((destination) => [...source, "-d", destination, ...tag, "-j", "ACCEPT"]),
    ...rules.denied.map((destination) =>
      destination === ALL_TRAFFIC ? [...source, ...tag, ...REJECT] : [...source, "-d", destination, ...tag, ...REJECT],
    ),
  ];
  const installed: FirewallRule[] = [];
  try {
    for (const chain of CHAINS) {
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
  return CHAINS.flatMap((chain) => orderedSpecifications.map((specification) => ({ chain, specification })));
}

/** Deletes previously installed rules; missing rules are ignored. */
export async function removeFirewallRules(rules: readonly FirewallRule[]): Promise<void> {
  for (const rule of rules) await iptables(["-D", rule.chain, ...rule.specification]).catch(() => undefined);
}
