/**
 * Refusals before anything is created (ADR 0048): a namespace with a sidecar-injecting mesh (its proxy would carry
 * the sandbox's traffic past our policy), and a namespace where another NetworkPolicy selects the sandbox's Pod with
 * an allow rule (policies are additive: any allow widens our deny-all).
 */
import type { CoreV1Api, NetworkingV1Api, V1NetworkPolicy } from "@kubernetes/client-node";
import { BackendUnavailableError, PolicyNotEnforcedError } from "@sbx/core";
import { SANDBOX_ID_LABEL } from "./kubernetes-manifests.js";
import { mapKubernetesError, statusCodeOf } from "./map-kubernetes-error.js";

/** Namespace labels that turn on sidecar injection. */
const MESH_LABELS: ReadonlyArray<[string, string | undefined]> = [
  ["istio-injection", "enabled"],
  ["istio.io/rev", undefined],
  ["linkerd.io/inject", "enabled"],
];

/** Reads the namespace and refuses a missing one or one with mesh injection on. */
export async function checkNamespace(core: CoreV1Api, namespace: string): Promise<void> {
  let labels: Record<string, string>;
  let annotations: Record<string, string>;
  try {
    const object = await core.readNamespace({ name: namespace });
    labels = object.metadata?.labels ?? {};
    annotations = object.metadata?.annotations ?? {};
  } catch (error) {
    if (statusCodeOf(error) === 404) {
      throw new BackendUnavailableError({
        backend: "k8s",
        retryable: false,
        remedy: `kubectl create namespace ${namespace} (and give sbx a Role there; docs/backends/kubernetes.md).`,
        message: `The namespace ${JSON.stringify(namespace)} does not exist. Create it for sbx alone, or set settings.namespace.`,
      });
    }
    throw mapKubernetesError(error, { operation: "read the sandbox namespace" });
  }
  for (const [key, value] of MESH_LABELS) {
    const present = labels[key] ?? annotations[key];
    if (present !== undefined && (value === undefined || present === value)) {
      throw new PolicyNotEnforcedError({
        backend: "k8s",
        policy: "network",
        message: `The namespace ${JSON.stringify(namespace)} has ${key}=${present}: a mesh sidecar injected into the sandbox Pod would carry its traffic past the deny-all NetworkPolicy. Use a namespace without mesh injection.`,
      });
    }
  }
}

/** Whether `policy` may select a Pod with `labels` (an expression selector counts as "may"). */
function mayselect(policy: V1NetworkPolicy, labels: Readonly<Record<string, string>>): boolean {
  const selector = policy.spec?.podSelector;
  if ((selector?.matchExpressions ?? []).length > 0) return true;
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

/** Whether `policy` allows anything (an ingress or egress rule; an Egress-only policy with no rules allows nothing). */
function allowsSomething(policy: V1NetworkPolicy): boolean {
  return (policy.spec?.egress ?? []).length > 0 || (policy.spec?.ingress ?? []).length > 0;
}

/**
 * Refuses when another policy in the namespace selects the sandbox's Pod and allows traffic. `podLabels` are every label
 * the Pod will carry (`podLabelsOf`: the metadata labels too, which another policy could select it by).
 */
export async function checkNoWideningPolicy(
  networking: NetworkingV1Api,
  namespace: string,
  sandboxId: string,
  podLabels: Readonly<Record<string, string>>,
): Promise<void> {
  let policies: V1NetworkPolicy[];
  try {
    policies = (await networking.listNamespacedNetworkPolicy({ namespace })).items;
  } catch (error) {
    throw mapKubernetesError(error, { operation: "list the namespace's NetworkPolicies" });
  }
  const labels = podLabels;
  const widening = policies.filter((policy) => {
    const selected = policy.spec?.podSelector?.matchLabels?.[SANDBOX_ID_LABEL];
    if (selected !== undefined && selected !== sandboxId) return false;
    return mayselect(policy, labels) && allowsSomething(policy);
  });
  if (widening.length > 0) {
    throw new PolicyNotEnforcedError({
      backend: "k8s",
      policy: "network",
      message: `NetworkPolicies ${widening.map((policy) => policy.metadata?.name).join(", ")} in namespace ${JSON.stringify(namespace)} select the sandbox's Pod and allow traffic; policies are additive, so the sandbox would not be deny-by-default. Give sbx a namespace of its own.`,
    });
  }
}
