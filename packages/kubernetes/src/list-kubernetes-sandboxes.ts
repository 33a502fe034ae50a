/**
 * `provider.list({ labels })` (ADR 0050, ADR 0058): the namespace's sbx Pods carrying every label given, oldest first.
 * The label selector narrows by `sbx.dev/managed=true` and by the `metadata.sbx.dev/<key>` labels of the entries a
 * Kubernetes label can hold; every entry is then checked against the Pod's `sbx.dev/metadata` annotation, which holds
 * the whole metadata losslessly (core filters once more itself).
 */
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { ProviderError, type ListedSandbox } from "@sbx/core";
import { throwIfAborted } from "@sbx/core/adapter";
import { MANAGED_LABEL, METADATA_ANNOTATION, NAME_ANNOTATION, metadataLabelOf, SANDBOX_ID_LABEL } from "./kubernetes-manifests.js";
import { mapKubernetesError } from "./map-kubernetes-error.js";

/** Pods asked for per list request (the API server pages with `continue`). */
const PAGE_SIZE = 500;
/** More entries than core accepts from a backend (ADR 0050): past it the answer is an error, never a cut list. */
const MOST_ENTRIES = 10_000;

/**
 * A Pod's phase as a listed sandbox's state: Pending → `starting`; Running → `running`; Succeeded, Failed, Unknown (the
 * node lost) and any Pod being deleted → `stopped` (listed until deleted: `connectSandbox` refuses all of these).
 */
export function listedStateOf(pod: V1Pod): ListedSandbox["state"] {
  if (pod.metadata?.deletionTimestamp) return "stopped";
  if (pod.status?.phase === "Running") return "running";
  if (pod.status?.phase === "Pending" || pod.status?.phase === undefined) return "starting";
  return "stopped";
}

/** The caller's metadata recorded on a Pod (its annotation), or a `ProviderError` when it is not a string map. */
export function recordedMetadataOf(pod: V1Pod): Record<string, string> {
  const text = pod.metadata?.annotations?.[METADATA_ANNOTATION];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? "");
  } catch {
    parsed = undefined;
  }
  const valid =
    typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.values(parsed).every((value) => typeof value === "string");
  if (!valid)
    throw new ProviderError({
      backend: "k8s",
      message: `The sbx Pod ${pod.metadata?.name ?? "?"} has no readable ${METADATA_ANNOTATION} annotation (a JSON map of strings); its labels cannot be reported.`,
    });
  return parsed as Record<string, string>;
}

/** The label selector for `labels`: the management label and each entry a label can hold (the rest is filtered here). */
export function listSelectorOf(labels: Readonly<Record<string, string>>): string {
  const requirements = [`${MANAGED_LABEL}=true`];
  for (const [key, value] of Object.entries(labels)) {
    const label = metadataLabelOf(key, value);
    if (label) requirements.push(`${label[0]}=${label[1]}`);
  }
  return requirements.join(",");
}

/** A Pod as a listed sandbox, or undefined when it does not carry every label asked for (or has no sandbox id). */
export function listedSandboxOf(pod: V1Pod, labels: Readonly<Record<string, string>>): ListedSandbox | undefined {
  const id = pod.metadata?.labels?.[SANDBOX_ID_LABEL];
  if (!id) return undefined;
  const recorded = recordedMetadataOf(pod);
  if (!Object.entries(labels).every(([key, value]) => Object.hasOwn(recorded, key) && recorded[key] === value)) return undefined;
  const created = pod.metadata?.creationTimestamp;
  const createdAt = created ? new Date(created) : undefined;
  if (!createdAt || Number.isNaN(createdAt.getTime()))
    throw new ProviderError({ backend: "k8s", message: `The sbx Pod ${pod.metadata?.name ?? "?"} has no creationTimestamp.` });
  return {
    id,
    labels: recorded,
    createdAt: createdAt.toISOString(),
    state: listedStateOf(pod),
    name: pod.metadata?.annotations?.[NAME_ANNOTATION] ?? null,
  };
}

/** Lists the sbx sandboxes of `namespace` carrying every one of `labels`, oldest first (ties by id). */
export async function listKubernetesSandboxes(options: {
  core: CoreV1Api;
  namespace: string;
  labels: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}): Promise<ListedSandbox[]> {
  const { core, namespace, labels, signal } = options;
  const labelSelector = listSelectorOf(labels);
  const listed: ListedSandbox[] = [];
  let continueToken: string | undefined;
  do {
    throwIfAborted(signal, "k8s");
    let page;
    try {
      page = await core.listNamespacedPod({ namespace, labelSelector, limit: PAGE_SIZE, _continue: continueToken });
    } catch (error) {
      throw mapKubernetesError(error, { operation: "list the namespace's sbx Pods" });
    }
    for (const pod of page.items) {
      const entry = listedSandboxOf(pod, labels);
      if (entry) listed.push(entry);
    }
    if (listed.length > MOST_ENTRIES)
      throw new ProviderError({
        backend: "k8s",
        message: `More than ${MOST_ENTRIES} sbx sandboxes in namespace ${namespace} carry these labels; narrow the labels (a cut list would be false).`,
      });
    continueToken = page.metadata?._continue || undefined;
  } while (continueToken);
  throwIfAborted(signal, "k8s");
  return listed.sort((left, right) => Date.parse(left.createdAt) - Date.parse(right.createdAt) || left.id.localeCompare(right.id));
}
