/**
 * Listing and sweeping by label (ADR 0048): sandboxes are the Pods labelled `sbx.dev/managed=true`. The sweeper
 * deletes finished Pods (deadline passed, node lost, PID 1 ended), Pods past their `sbx.dev/expires-at` by a grace,
 * and sbx NetworkPolicies whose Pod is gone, once they are old enough that no create can be between its policy and
 * its Pod. 404s count as done.
 */
import type { CoreV1Api, NetworkingV1Api } from "@kubernetes/client-node";
import { EXPIRES_AT_ANNOTATION, MANAGED_LABEL, SANDBOX_ID_LABEL } from "./kubernetes-manifests.js";

/** How long past its expiry a Pod is left before the sweeper deletes it, in ms. */
const EXPIRY_GRACE_MS = 60_000;
/** How old an sbx NetworkPolicy without a Pod must be before it is deleted, in ms (a create is between the two meanwhile). */
const ORPHAN_POLICY_AGE_MS = 10 * 60_000;

/** The ids of the sandboxes in `namespace` (Pods labelled as sbx's, any phase). */
export async function listKubernetesSandboxIds(options: { core: CoreV1Api; namespace: string }): Promise<string[]> {
  const pods = await options.core.listNamespacedPod({ namespace: options.namespace, labelSelector: `${MANAGED_LABEL}=true` });
  return pods.items.map((pod) => pod.metadata?.labels?.[SANDBOX_ID_LABEL]).filter((id): id is string => typeof id === "string");
}

/** Deletes what crashed or finished sandboxes left in `namespace`; returns the names deleted. */
export async function sweepKubernetesOrphans(options: {
  core: CoreV1Api;
  networking: NetworkingV1Api;
  namespace: string;
  now?: Date;
}): Promise<string[]> {
  const now = (options.now ?? new Date()).getTime();
  const { core, networking, namespace } = options;
  const deleted: string[] = [];
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: `${MANAGED_LABEL}=true` })).items;
  const livePodIds = new Set<string>();
  for (const pod of pods) {
    const name = pod.metadata?.name;
    if (!name) continue;
    const expiresAt = Date.parse(pod.metadata?.annotations?.[EXPIRES_AT_ANNOTATION] ?? "");
    const finished = pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
    const expired = Number.isFinite(expiresAt) && expiresAt + EXPIRY_GRACE_MS < now;
    if (finished || expired) {
      await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }).catch(() => {});
      deleted.push(name);
    } else {
      const id = pod.metadata?.labels?.[SANDBOX_ID_LABEL];
      if (id) livePodIds.add(id);
    }
  }
  const policies = (await networking.listNamespacedNetworkPolicy({ namespace, labelSelector: `${MANAGED_LABEL}=true` })).items;
  for (const policy of policies) {
    const name = policy.metadata?.name;
    const id = policy.metadata?.labels?.[SANDBOX_ID_LABEL];
    const created = policy.metadata?.creationTimestamp ? new Date(policy.metadata.creationTimestamp).getTime() : now;
    if (!name || !id || livePodIds.has(id) || now - created < ORPHAN_POLICY_AGE_MS) continue;
    await networking.deleteNamespacedNetworkPolicy({ namespace, name }).catch(() => {});
    deleted.push(name);
  }
  return deleted;
}
