/**
 * Waiting for a new sandbox Pod to run (ADR 0051): list the Pod by its sandbox label, then watch from the list's
 * `resourceVersion` until it runs or fails, re-listing when the watch ends or is expired (`410 Gone`, reason
 * `Expired`: the server no longer keeps changes that old). The cluster's failures are typed errors: a Pod that cannot
 * be scheduled within the create timeout (`PodUnschedulableError`, with the Pod's events), an image that cannot be
 * pulled (`ImagePullError`), a container that cannot be created or a Pod that ended (`ProviderError`).
 */
import type { CoreV1Api, V1Pod, Watch } from "@kubernetes/client-node";
import { AbortedError, ProviderError } from "@sbx/core";
import { ImagePullError, PodUnschedulableError, type PodEvent } from "./kubernetes-errors.js";
import { mapKubernetesError } from "./map-kubernetes-error.js";

/** Waiting reasons that mean the image cannot be pulled. */
const IMAGE_PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"]);
/** Waiting reasons that mean the container cannot be created as specified. */
const CONTAINER_CONFIG_REASONS = new Set(["CreateContainerConfigError", "CreateContainerError", "RunContainerError"]);

/** Re-lists after a watch ended (the server's timeout, a dropped stream, 410 Expired) at most this often, in ms. */
const RELIST_INTERVAL_MS = 250;
/** Longest single watch, in seconds (a real API server ends watches on its own timeout too). */
const WATCH_TIMEOUT_SECONDS = 60;
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

/** What the Pod's state says: it runs (the Pod), it failed (the error), or wait. */
function verdictOf(pod: V1Pod, podName: string, image: string): V1Pod | Error | undefined {
  const phase = pod.status?.phase;
  if (pod.metadata?.deletionTimestamp) return new ProviderError({ backend: "k8s", message: `The sandbox Pod ${podName} was deleted before it ran.` });
  if (phase === "Running") return pod;
  if (phase === "Failed" || phase === "Succeeded") {
    return new ProviderError({
      backend: "k8s",
      message: `The sandbox Pod ${podName} ended before it ran (phase ${phase}${pod.status?.reason ? `, ${pod.status.reason}` : ""}): ${pod.status?.message ?? ""}`,
    });
  }
  const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
  if (waiting?.reason && IMAGE_PULL_REASONS.has(waiting.reason)) {
    return new ImagePullError({
      reason: waiting.reason,
      image,
      message: `The cluster could not pull the image ${JSON.stringify(image)} (${waiting.reason}): ${waiting.message ?? ""}`,
    });
  }
  if (waiting?.reason && CONTAINER_CONFIG_REASONS.has(waiting.reason)) {
    return new ProviderError({
      backend: "k8s",
      message: `The cluster could not start the sandbox container (${waiting.reason}): ${waiting.message ?? ""}`,
    });
  }
  return undefined;
}

/** The typed error of a Pod that did not run within the create timeout. */
async function timeoutError(core: CoreV1Api, namespace: string, podName: string, pod: V1Pod | undefined, timeoutMs: number): Promise<Error> {
  const events = await podEvents(core, namespace, podName);
  const said = events.map((event) => `${event.reason}: ${event.message}`).join("; ") || "none";
  const condition = pod ? unschedulableCondition(pod) : undefined;
  if (condition) {
    return new PodUnschedulableError({
      events,
      message: `The cluster could not schedule the sandbox Pod within ${timeoutMs} ms (${condition.reason ?? "Unschedulable"}): ${condition.message ?? ""} Events: ${said}`,
    });
  }
  return new ProviderError({
    backend: "k8s",
    retryable: true,
    message: `The sandbox Pod did not start within ${timeoutMs} ms (phase ${pod?.status?.phase ?? "unknown"}). Events: ${said}`,
  });
}

/** How one watch ended: the Pod's verdict, or a reason to list again. */
type WatchOutcome = { readonly verdict: V1Pod | Error; readonly latest: V1Pod } | { readonly relist: string; readonly latest: V1Pod | undefined };

/** Watches the Pod from `resourceVersion` until its state decides, the watch ends, or `remainingMs` pass. */
async function watchPod(options: {
  watch: Watch;
  namespace: string;
  podName: string;
  labelSelector: string;
  image: string;
  resourceVersion: string;
  remainingMs: number;
  signal: AbortSignal | undefined;
}): Promise<WatchOutcome> {
  let latest: V1Pod | undefined;
  let controller: AbortController | undefined;
  let settle!: (outcome: WatchOutcome) => void;
  const outcome = new Promise<WatchOutcome>((resolve) => {
    settle = resolve;
  });
  const timer = setTimeout(() => settle({ relist: "the create timeout passed", latest }), options.remainingMs);
  const onAbort = () => settle({ relist: "aborted", latest });
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    controller = await options.watch.watch(
      `/api/v1/namespaces/${encodeURIComponent(options.namespace)}/pods`,
      {
        labelSelector: options.labelSelector,
        resourceVersion: options.resourceVersion,
        timeoutSeconds: Math.max(1, Math.min(WATCH_TIMEOUT_SECONDS, Math.ceil(options.remainingMs / 1000))),
        allowWatchBookmarks: false,
      },
      (type: string, object: unknown) => {
        if (type === "ERROR") {
          const status = object as { code?: number; reason?: string; message?: string };
          settle({ relist: `the watch failed (${status.code ?? "?"} ${status.reason ?? ""}: ${status.message ?? ""})`, latest });
          return;
        }
        const pod = object as V1Pod;
        if (pod.metadata?.name !== options.podName) return;
        latest = pod;
        if (type === "DELETED") {
          settle({
            verdict: new ProviderError({ backend: "k8s", message: `The sandbox Pod ${options.podName} was deleted before it ran.` }),
            latest: pod,
          });
          return;
        }
        const verdict = verdictOf(pod, options.podName, options.image);
        if (verdict) settle({ verdict, latest: pod });
      },
      (error: unknown) => settle({ relist: error ? `the watch ended: ${String(error)}` : "the watch ended", latest }),
    );
    return await outcome;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    controller?.abort();
  }
}

/**
 * Lists the Pod, then watches it until it runs; re-lists (and watches again from the new list's version) whenever the
 * watch ends without a verdict, including a `410 Expired`. Throws the typed error of what stopped it.
 */
export async function waitForPodRunning(options: {
  core: CoreV1Api;
  watch: Watch;
  namespace: string;
  podName: string;
  /** A label selector that selects the Pod (its sandbox id label). */
  labelSelector: string;
  image: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Called with each reason the wait listed again (for tests). */
  onRelist?: (reason: string) => void;
}): Promise<V1Pod> {
  const { core, namespace, podName } = options;
  const deadline = Date.now() + options.timeoutMs;
  let latest: V1Pod | undefined;
  for (let round = 0; ; round++) {
    if (options.signal?.aborted) throw new AbortedError({ backend: "k8s" });
    if (round > 0) await new Promise((resolve) => setTimeout(resolve, RELIST_INTERVAL_MS));
    let list;
    try {
      list = await core.listNamespacedPod({ namespace, labelSelector: options.labelSelector });
    } catch (error) {
      throw mapKubernetesError(error, { operation: "list the new Pod" });
    }
    const pod = list.items.find((item) => item.metadata?.name === podName);
    if (!pod) throw new ProviderError({ backend: "k8s", message: `The sandbox Pod ${podName} disappeared before it ran.` });
    latest = pod;
    const verdict = verdictOf(pod, podName, options.image);
    if (verdict instanceof Error) throw verdict;
    if (verdict) return verdict;
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) throw await timeoutError(core, namespace, podName, latest, options.timeoutMs);
    const watched = await watchPod({
      watch: options.watch,
      namespace,
      podName,
      labelSelector: options.labelSelector,
      image: options.image,
      resourceVersion: list.metadata?.resourceVersion ?? "0",
      remainingMs,
      signal: options.signal,
    });
    latest = watched.latest ?? latest;
    if ("verdict" in watched) {
      if (watched.verdict instanceof Error) throw watched.verdict;
      return watched.verdict;
    }
    if (options.signal?.aborted) throw new AbortedError({ backend: "k8s" });
    if (Date.now() >= deadline) throw await timeoutError(core, namespace, podName, latest, options.timeoutMs);
    options.onRelist?.(watched.relist);
  }
}
