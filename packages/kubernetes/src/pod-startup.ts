/**
 * Waiting for a new sandbox Pod to run, by a bounded poll of the Pod (no watch: client-node's watch timeouts differ
 * between versions), with the cluster's failures as typed errors: a Pod that cannot be scheduled within the create
 * timeout (`PodUnschedulableError`, with the Pod's events), an image that cannot be pulled (`ImagePullError`), a
 * container that cannot be created or a Pod that ended (`ProviderError`).
 */
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { AbortedError, ProviderError } from "@sbx/core";
import { ImagePullError, PodUnschedulableError, type PodEvent } from "./kubernetes-errors.js";
import { mapKubernetesError } from "./map-kubernetes-error.js";

/** Waiting reasons that mean the image cannot be pulled. */
const IMAGE_PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"]);
/** Waiting reasons that mean the container cannot be created as specified. */
const CONTAINER_CONFIG_REASONS = new Set(["CreateContainerConfigError", "CreateContainerError", "RunContainerError"]);

/** Interval between polls, in ms. */
const POLL_INTERVAL_MS = 250;

/** The Pod's events (the scheduler's and kubelet's words), oldest first; empty when they cannot be read. */
export async function podEvents(core: CoreV1Api, namespace: string, podName: string): Promise<PodEvent[]> {
  try {
    const list = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${podName}` });
    return list.items.map((event) => ({ reason: event.reason ?? "", message: event.message ?? "" }));
  } catch {
    return [];
  }
}

function unschedulableCondition(pod: V1Pod) {
  return pod.status?.conditions?.find((condition) => condition.type === "PodScheduled" && condition.status === "False");
}

/** Polls the Pod until it runs; throws the typed error of what stopped it. */
export async function waitForPodRunning(options: {
  core: CoreV1Api;
  namespace: string;
  podName: string;
  image: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}): Promise<V1Pod> {
  const { core, namespace, podName } = options;
  const started = Date.now();
  for (;;) {
    if (options.signal?.aborted) throw new AbortedError({ backend: "k8s" });
    let pod: V1Pod;
    try {
      pod = await core.readNamespacedPod({ namespace, name: podName });
    } catch (error) {
      throw mapKubernetesError(error, { operation: "read the new Pod" });
    }
    const phase = pod.status?.phase;
    if (phase === "Running") return pod;
    if (phase === "Failed" || phase === "Succeeded") {
      throw new ProviderError({
        backend: "k8s",
        message: `The sandbox Pod ${podName} ended before it ran (phase ${phase}${pod.status?.reason ? `, ${pod.status.reason}` : ""}): ${pod.status?.message ?? ""}`,
      });
    }
    const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
    if (waiting?.reason && IMAGE_PULL_REASONS.has(waiting.reason)) {
      throw new ImagePullError({
        reason: waiting.reason,
        image: options.image,
        message: `The cluster could not pull the image ${JSON.stringify(options.image)} (${waiting.reason}): ${waiting.message ?? ""}`,
      });
    }
    if (waiting?.reason && CONTAINER_CONFIG_REASONS.has(waiting.reason)) {
      throw new ProviderError({
        backend: "k8s",
        message: `The cluster could not start the sandbox container (${waiting.reason}): ${waiting.message ?? ""}`,
      });
    }
    if (Date.now() - started >= options.timeoutMs) {
      const events = await podEvents(core, namespace, podName);
      const condition = unschedulableCondition(pod);
      if (condition) {
        throw new PodUnschedulableError({
          events,
          message: `The cluster could not schedule the sandbox Pod within ${options.timeoutMs} ms (${condition.reason ?? "Unschedulable"}): ${condition.message ?? ""} Events: ${events.map((event) => `${event.reason}: ${event.message}`).join("; ") || "none"}`,
        });
      }
      throw new ProviderError({
        backend: "k8s",
        retryable: true,
        message: `The sandbox Pod did not start within ${options.timeoutMs} ms (phase ${phase ?? "unknown"}). Events: ${events.map((event) => `${event.reason}: ${event.message}`).join("; ") || "none"}`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
