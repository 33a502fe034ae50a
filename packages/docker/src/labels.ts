import { hostname } from "node:os";
import { policyLabelValue, type PolicyLabel } from "./policy-label.js";

/** Label every sbx container and volume carries; the sweep only ever touches resources with it. */
export const MANAGED_LABEL = "sbx.managed";
/** Label with the owning process id. */
export const OWNER_PID_LABEL = "sbx.owner.pid";
/** Label with the owning host name. */
export const OWNER_HOST_LABEL = "sbx.owner.host";
/** Label with the creating session (one per provider instance). */
export const SESSION_LABEL = "sbx.session";
/** Label with the ISO time after which the sandbox is expired (its PID 1 deadline). */
export const EXPIRES_AT_LABEL = "sbx.expires-at";
/** Label with the requested policy (JSON), read back by `connect`. */
export const POLICY_LABEL = "sbx.policy";
/** Prefix for caller metadata labels. */
export const METADATA_LABEL_PREFIX = "sbx.metadata.";

/** The labels of a new sandbox. */
export function sandboxLabels(options: {
  session: string;
  expiresAt: Date;
  policy: PolicyLabel;
  metadata: Record<string, string>;
}): Record<string, string> {
  const labels: Record<string, string> = {
    [MANAGED_LABEL]: "1",
    [OWNER_PID_LABEL]: String(process.pid),
    [OWNER_HOST_LABEL]: hostname(),
    [SESSION_LABEL]: options.session,
    [EXPIRES_AT_LABEL]: options.expiresAt.toISOString(),
    [POLICY_LABEL]: policyLabelValue(options.policy),
  };
  for (const [key, value] of Object.entries(options.metadata)) labels[METADATA_LABEL_PREFIX + key] = value;
  return labels;
}

/**
 * The labels of a sandbox's workspace volume: managed, session, owner (pid and host) and expiry, copied from the
 * container's, so `sweepOrphans()` can tell a volume whose owner is gone from one a live process is creating.
 */
export function volumeLabels(containerLabels: Readonly<Record<string, string>>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const name of [MANAGED_LABEL, SESSION_LABEL, OWNER_PID_LABEL, OWNER_HOST_LABEL, EXPIRES_AT_LABEL]) {
    const value = containerLabels[name];
    if (value !== undefined) labels[name] = value;
  }
  return labels;
}
