import { randomBytes } from "node:crypto";
import type { V1Pod } from "@kubernetes/client-node";
import {
  BackendUnavailableError,
  CapabilityNotSupportedError,
  PolicyNotEnforcedError,
  ProviderError,
  SandboxNotFoundError,
  type BackendStatus,
  type ListedSandbox,
  type PolicyRecord,
  type SandboxProviderV1,
} from "@sbx/core";
import {
  backendsSupporting,
  registerBackendManifest,
  throwIfAborted,
  type DriverAudit,
  type ProviderCreateRequest,
  type ResolvedCreateOptions,
  type SandboxDriverV1,
} from "@sbx/core/adapter";
import { EGRESS_PROBE_SCRIPT, parseProbeOutput, reachedPaths, type ProbeOutcome } from "./egress-probe.js";
import { loadClients, whyNoKubeconfig } from "./kube-config.js";
import { KUBERNETES_CAPABILITIES } from "./kubernetes-capabilities.js";
import { KubernetesDriver, type KubernetesClients } from "./kubernetes-driver.js";
import {
  buildDenyAllNetworkPolicy,
  buildIngressOnlyClaimPolicy,
  buildSandboxPod,
  deniesAllEgress,
  MANAGED_LABEL,
  NAME_ANNOTATION,
  namedSandboxIdOf,
  POLICY_ANNOTATION,
  type RecordedPolicy,
  objectNameOf,
  podLabelsOf,
  SANDBOX_CONTAINER,
  SANDBOX_ID_LABEL,
} from "./kubernetes-manifests.js";
import {
  kubernetesSettingsSchema,
  parseKubernetesSettings,
  type KubernetesSettings,
  type ResolvedKubernetesSettings,
} from "./kubernetes-settings.js";
import { mapKubernetesError, statusCodeOf } from "./map-kubernetes-error.js";
import { checkNamespace, checkNoWideningPolicy } from "./namespace-checks.js";
import { openPodExec } from "./pod-exec.js";
import { waitForPodRunning } from "./pod-startup.js";
import { sweepKubernetesOrphans } from "./kubernetes-sweep.js";
import { listKubernetesSandboxes } from "./list-kubernetes-sandboxes.js";
import { getOrCreateNamed, NameTakenSignal } from "./named-kubernetes-sandboxes.js";

/** The client library version this adapter is built and tested against (pinned; ADR 0048). */
export const KUBERNETES_CLIENT_VERSION = "@kubernetes/client-node 1.4.0";

/** The image for `k8s://` with nothing after the scheme, unless `settings.defaultImage` names another. */
export const DEFAULT_KUBERNETES_IMAGE = "python:3.12-slim";

/** The kubelet's port on the node, probed at the Pod's `hostIP`. */
const KUBELET_PORT = 10250;

function limitsPlan(options: ResolvedCreateOptions, settings: ResolvedKubernetesSettings): { cpus: number; memoryMiB: number } {
  if (options.limits?.pids !== undefined) {
    throw new CapabilityNotSupportedError({
      capability: "RESOURCE_LIMITS",
      backend: "k8s",
      supportedBy: backendsSupporting("RESOURCE_LIMITS", "k8s"),
      detail:
        "limits.pids: Kubernetes has no per-Pod process limit (only the kubelet's node-wide podPidsLimit), so it was refused rather than ignored",
    });
  }
  return { cpus: options.limits?.cpus ?? settings.defaultCpus, memoryMiB: options.limits?.memoryMiB ?? settings.defaultMemoryMiB };
}

/** Runs the egress probe in the new Pod (before any caller code); throws when a path was reached or the probe could not run. */
async function proveEgressDenied(
  clients: KubernetesClients,
  namespace: string,
  pod: V1Pod,
  extraTargets: readonly string[],
): Promise<ProbeOutcome[]> {
  const targets = [...(pod.status?.hostIP ? [`${pod.status.hostIP}:${KUBELET_PORT}`] : []), ...extraTargets];
  const output: Uint8Array[] = [];
  const errors: Uint8Array[] = [];
  let exitCode: number;
  try {
    const stream = await openPodExec({
      exec: clients.exec,
      namespace,
      pod: pod.metadata!.name!,
      container: SANDBOX_CONTAINER,
      // -I: isolated (no working directory on sys.path, no PYTHON* variables), as an attacher probes a Pod whose code may have run.
      command: ["python3", "-I", "-c", EGRESS_PROBE_SCRIPT, ...targets],
      onStdout: (chunk) => output.push(chunk),
      onStderr: (chunk) => errors.push(chunk),
      stdin: false,
    });
    exitCode = await stream.exitCode;
  } catch (error) {
    throw mapKubernetesError(error, { operation: "run the egress probe in the new Pod" });
  }
  const stderr = Buffer.concat(errors).toString("utf8").slice(0, 500);
  if (exitCode === 127) {
    throw new ProviderError({
      backend: "k8s",
      message: `The image has no python3, which the sbx agent and the egress probe need: ${stderr}`,
    });
  }
  const outcomes = parseProbeOutput(Buffer.concat(output).toString("utf8"));
  if (exitCode !== 0 || outcomes.length === 0 || outcomes.length < targets.length) {
    throw new PolicyNotEnforcedError({
      backend: "k8s",
      policy: "network",
      message: `The egress probe could not prove the deny-all NetworkPolicy is enforced (exit ${exitCode}, ${outcomes.length} paths probed): ${stderr}`,
    });
  }
  const reached = reachedPaths(outcomes);
  if (reached.length > 0) {
    throw new PolicyNotEnforcedError({
      backend: "k8s",
      policy: "network",
      message: `The cluster accepted the sandbox's deny-all NetworkPolicy but does not enforce it: from inside the Pod, ${reached.map((path) => `${path.target} ${path.outcome}`).join(", ")}. This cluster's network plugin ignores NetworkPolicy; the sandbox was deleted rather than run with network access. Use a CNI that enforces NetworkPolicy (Calico, Cilium).`,
    });
  }
  return outcomes;
}

/** Cores from a CPU quantity read back from the API (`1500m`, `2`), or null when unreadable. */
export function cpusOfQuantity(quantity: string | undefined): number | null {
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity ?? "");
  if (!match) return null;
  return match[2] ? Number(match[1]) / 1000 : Number(match[1]);
}

/** MiB from a memory quantity read back from the API (`256Mi`, `1Gi`), or null when not a whole number of MiB. */
export function mebibytesOfQuantity(quantity: string | undefined): number | null {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity ?? "");
  if (!match) return null;
  return Number(match[1]) * (match[2] === "Gi" ? 1024 : 1);
}

/** The policy a named sandbox records for callers attaching to it (ADR 0058). */
export function recordedPolicyOf(options: ResolvedCreateOptions, limits: { cpus: number; memoryMiB: number }): RecordedPolicy {
  return { egress: options.network.egress, user: options.user, cpus: limits.cpus, memoryMiB: limits.memoryMiB };
}

function userRecord(pod: V1Pod): PolicyRecord {
  const context = pod.spec?.containers[0]?.securityContext;
  return {
    requested: "default",
    applied: { runAsUser: context?.runAsUser ?? null, runAsNonRoot: context?.runAsNonRoot ?? null },
    enforcement:
      "Pod securityContext: non-root uid, allowPrivilegeEscalation false, capabilities drop ALL, readOnlyRootFilesystem, seccomp RuntimeDefault, no service account token (read back from the API).",
  };
}

function limitsRecord(requested: ResolvedCreateOptions["limits"], pod: V1Pod): PolicyRecord {
  const resources = pod.spec?.containers[0]?.resources;
  return {
    requested: requested ? { ...requested } : null,
    applied: {
      cpus: cpusOfQuantity(resources?.limits?.cpu),
      memoryMiB: mebibytesOfQuantity(resources?.limits?.memory),
      requests: resources?.requests ?? null,
      limits: resources?.limits ?? null,
    },
    enforcement:
      "Pod resources with requests equal to limits (Guaranteed QoS), enforced by the kubelet and container runtime cgroups (CPU quota, memory.max with OOM kill). No per-Pod pids limit exists.",
  };
}

function lifetimeRecord(timeoutMs: number | null, pod: V1Pod): PolicyRecord {
  return {
    requested: timeoutMs === null ? null : { timeoutMs },
    applied: { activeDeadlineSeconds: pod.spec?.activeDeadlineSeconds ?? null },
    enforcement:
      "The kubelet ends the Pod at activeDeadlineSeconds even if this process dies (phase Failed, DeadlineExceeded); core's timer kills it first; finished Pods are removed by the label sweeper.",
  };
}

function runtimeRecord(settings: ResolvedKubernetesSettings | undefined, pod: V1Pod): PolicyRecord {
  return {
    requested: settings?.runtimeClassName ?? null,
    applied: pod.spec?.runtimeClassName ?? "the cluster's default runtime",
    enforcement:
      "Pod runtimeClassName (the RuntimeClass's handler, for example runsc for gVisor); without one, the node's default container runtime.",
  };
}

const MOUNTS_RECORD: PolicyRecord = {
  requested: [],
  applied: [],
  enforcement: "None: the client's folders are not on the node (HOST_MOUNTS is off); the workspace is an emptyDir on the node.",
};

async function deleteQuietly(clients: KubernetesClients, namespace: string, name: string, what: { pod: boolean }): Promise<void> {
  if (what.pod) await clients.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }).catch(() => {});
  await clients.networking.deleteNamespacedNetworkPolicy({ namespace, name }).catch(() => {});
}

/**
 * The Kubernetes provider (ADR 0048): one hardened Pod per sandbox, on the official `@kubernetes/client-node`.
 * `createSandbox("k8s://python:3.12-slim", { settings: { namespace: "sbx" } })` loads it.
 */
export function createSandboxProvider(settings?: KubernetesSettings | Record<string, unknown>): SandboxProviderV1 {
  const resolved = parseKubernetesSettings(settings ?? {});
  let clientsOnce: ReturnType<typeof loadClients> | undefined;
  let swept = false;
  const clients = () => {
    if (!clientsOnce) {
      const reason = whyNoKubeconfig(resolved);
      if (reason)
        throw new BackendUnavailableError({
          backend: "k8s",
          retryable: false,
          remedy: "Set settings.kubeconfig, settings.kubeconfigPath or KUBECONFIG.",
          message: reason,
        });
      try {
        clientsOnce = loadClients(resolved);
      } catch (error) {
        throw new BackendUnavailableError({
          backend: "k8s",
          retryable: false,
          cause: error,
          remedy: "Check the kubeconfig and settings.context (kubectl config get-contexts).",
          message: `The kubeconfig could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
    }
    return clientsOnce;
  };
  const serverVersion = async () => {
    try {
      return (await clients().version.getCode()).gitVersion;
    } catch (error) {
      throw mapKubernetesError(error, { operation: "read the API server's version" });
    }
  };

  const provider: SandboxProviderV1 = {
    specificationVersion: "sbx-v1",
    backend: "k8s",
    packageName: "@sbx/kubernetes",
    capabilities: KUBERNETES_CAPABILITIES,
    isolating: true,
    settingsSchema: kubernetesSettingsSchema,

    async detect(): Promise<BackendStatus> {
      const unusable = (reason: string, remedy: string): BackendStatus => ({ backend: "k8s", usable: false, isolating: true, reason, remedy });
      const missing = whyNoKubeconfig(resolved);
      if (missing) return unusable(missing, "Point settings.kubeconfigPath or KUBECONFIG at a cluster's kubeconfig.");
      try {
        const version = await serverVersion();
        await checkNamespace(clients().core, resolved.namespace);
        return {
          backend: "k8s",
          usable: true,
          isolating: true,
          reason: `Kubernetes ${version} at ${clients().config.getCurrentCluster()?.server ?? "?"}, namespace ${resolved.namespace}.`,
          remedy: "",
        };
      } catch (error) {
        return unusable(
          error instanceof Error ? error.message : String(error),
          "Check the cluster, the kubeconfig and the namespace (docs/backends/kubernetes.md).",
        );
      }
    },

    async create(request: ProviderCreateRequest): Promise<SandboxDriverV1> {
      return createInNamespace(request, undefined);
    },

    /** Get-or-create by name (NAMED_SANDBOXES, ADR 0058): the NetworkPolicy `sbx-<digest of name>` is the claim. */
    async getOrCreate(request: ProviderCreateRequest & { name: string }): Promise<{ driver: SandboxDriverV1; created: boolean }> {
      refuseUnsupported(request.options);
      const recorded = recordedPolicyOf(request.options, limitsPlan(request.options, resolved));
      return getOrCreateNamed({
        create: () => createInNamespace(request, request.name),
        connect: (sandboxId) =>
          connectTo({ sandboxId, options: request.options, signal: request.signal }, { proveDenied: request.options.network.egress === "deny" }),
        readPod: (podName) => clients().core.readNamespacedPod({ namespace: resolved.namespace, name: podName }),
        namespace: resolved.namespace,
        name: request.name,
        recorded,
        limitsAsked: { cpus: request.options.limits?.cpus !== undefined, memoryMiB: request.options.limits?.memoryMiB !== undefined },
        signal: request.signal,
      });
    },

    async list(request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal }): Promise<ListedSandbox[]> {
      return listKubernetesSandboxes({ core: clients().core, namespace: resolved.namespace, labels: request.labels, signal: request.signal });
    },

    async connect(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<SandboxDriverV1> {
      return connectTo(request, { proveDenied: false });
    },
  };

  /**
   * Attaches to a running sandbox Pod. With `proveDenied` (a caller attaching to a named sandbox with egress denied),
   * the Pod's policy must be the deny-all and this caller runs the egress probe itself before it gets the sandbox: the
   * creator's own probe may not have finished (or may fail) when the Pod is already Running.
   */
  async function connectTo(
    request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal },
    attach: { proveDenied: boolean },
  ): Promise<SandboxDriverV1> {
    const { sandboxId } = request;
    const api = clients();
    const namespace = resolved.namespace;
    const name = objectNameOf(sandboxId);
    const notFound = (detail: string) =>
      new SandboxNotFoundError({ backend: "k8s", sandboxId, message: `No running sbx sandbox ${sandboxId} in namespace ${namespace}: ${detail}` });
    if (!/^[a-f0-9]{16}$/.test(sandboxId)) throw notFound("not an id this adapter makes");
    let pod: V1Pod;
    try {
      pod = await api.core.readNamespacedPod({ namespace, name });
    } catch (error) {
      if (statusCodeOf(error) === 404) throw notFound("its Pod does not exist");
      throw mapKubernetesError(error, { operation: "read the sandbox's Pod" });
    }
    const labels = pod.metadata?.labels ?? {};
    if (labels[MANAGED_LABEL] !== "true" || labels[SANDBOX_ID_LABEL] !== sandboxId) throw notFound("the Pod of that name is not labelled as sbx's");
    if (pod.status?.phase !== "Running" || pod.metadata?.deletionTimestamp)
      throw notFound(`its Pod is ${pod.metadata?.deletionTimestamp ? "being deleted" : (pod.status?.phase ?? "in no phase")}`);
    const policy = await api.networking.readNamespacedNetworkPolicy({ namespace, name }).catch((error: unknown) => {
      if (statusCodeOf(error) === 404) return undefined;
      throw mapKubernetesError(error, { operation: "read the sandbox's NetworkPolicy" });
    });
    const denied = policy !== undefined && deniesAllEgress(policy);
    let probe: ProbeOutcome[] | undefined;
    if (attach.proveDenied) {
      if (!denied)
        throw new PolicyNotEnforcedError({
          backend: "k8s",
          policy: "network",
          message: `The sandbox ${sandboxId} has no deny-all NetworkPolicy ${name} (its Pod records egress denied); refusing to attach to it as egress-denied.`,
        });
      probe = await proveEgressDenied(api, namespace, pod, resolved.probeTargets);
    }
    const version = await serverVersion();
    const audit: DriverAudit = {
      backendVersion: `Kubernetes ${version}; ${KUBERNETES_CLIENT_VERSION}`,
      policies: {
        network: {
          requested: null,
          applied: denied
            ? {
                egress: "deny",
                networkPolicy: name,
                egressRules: policy.spec?.egress ?? [],
                ingressRules: policy.spec?.ingress ?? [],
                ...(probe ? { probe } : {}),
              }
            : { egress: "allow", networkPolicy: policy ? name : null, policyTypes: policy?.spec?.policyTypes ?? [] },
          enforcement: denied
            ? probe
              ? `Kubernetes NetworkPolicy ${name}, read back on attach; enforcement proven again from inside the Pod before attaching (${probe.map((outcome) => `${outcome.target} ${outcome.outcome}`).join(", ")}; sampled paths, not exhaustive).`
              : `Kubernetes NetworkPolicy ${name}, read back on connect (its enforcement was proven by the probe when the sandbox was created).`
            : policy
              ? `Kubernetes NetworkPolicy ${name} restricts ingress only (a named sandbox's claim); egress is not restricted by sbx.`
              : "No sbx NetworkPolicy exists for this sandbox (created with egress allowed, or removed since).",
        },
        limits: limitsRecord(undefined, pod),
        mounts: MOUNTS_RECORD,
        user: userRecord(pod),
        lifetime: lifetimeRecord(null, pod),
        runtime: runtimeRecord(undefined, pod),
      },
      notes: [`Connected to an existing Pod ${name} in namespace ${namespace}; its policies are read back from the API.`],
    };
    return new KubernetesDriver(api, {
      sandboxId,
      namespace,
      audit,
      ownsNetworkPolicy: policy !== undefined,
      agentCommands: resolved.agentCommands,
    });
  }

  /** Refuses a root user and an allowlist (neither exists on this backend). */
  function refuseUnsupported(options: ResolvedCreateOptions): void {
    if (options.user === "root") {
      throw new PolicyNotEnforcedError({
        backend: "k8s",
        policy: "user",
        message:
          'user: "root" is refused: sandbox Pods run as a non-root uid with no capabilities and no privilege escalation (Pod Security "restricted").',
      });
    }
    if (options.network.egress === "deny" && (options.network.allow ?? []).length > 0) {
      throw new CapabilityNotSupportedError({
        capability: "EGRESS_ALLOWLIST",
        backend: "k8s",
        supportedBy: backendsSupporting("EGRESS_ALLOWLIST", "k8s"),
        detail: "the Kubernetes adapter gives a sandbox all egress or none (a deny-all NetworkPolicy); an allowlist is refused",
      });
    }
  }

  /** Creates one sandbox; with `named`, its objects are named after the name and the NetworkPolicy claims it first. */
  async function createInNamespace(request: ProviderCreateRequest, named: string | undefined): Promise<SandboxDriverV1> {
    const { options, signal } = request;
    throwIfAborted(signal, "k8s");
    refuseUnsupported(options);
    const limits = limitsPlan(options, resolved);
    const api = clients();
    const namespace = resolved.namespace;
    const version = await serverVersion();
    if (!swept) {
      swept = true;
      void sweepKubernetesOrphans({ core: api.core, networking: api.networking, namespace }).catch(() => {});
    }
    const denyEgress = options.network.egress === "deny";
    const sandboxId = named === undefined ? randomBytes(8).toString("hex") : namedSandboxIdOf(named);
    const name = objectNameOf(sandboxId);
    const image = request.target || resolved.defaultImage;
    const namedAnnotations: Record<string, string> | undefined =
      named === undefined ? undefined : { [NAME_ANNOTATION]: named, [POLICY_ANNOTATION]: JSON.stringify(recordedPolicyOf(options, limits)) };
    await checkNamespace(api.core, namespace);
    if (denyEgress) await checkNoWideningPolicy(api.networking, namespace, sandboxId, podLabelsOf(sandboxId, options.metadata));
    throwIfAborted(signal, "k8s");
    const timeoutSeconds = Math.ceil(options.timeoutMs / 1000);
    if (namedAnnotations) {
      // The claim: the API server lets one caller create this name; everyone else gets 409 AlreadyExists and attaches.
      const claim = denyEgress ? buildDenyAllNetworkPolicy(sandboxId, namedAnnotations) : buildIngressOnlyClaimPolicy(sandboxId, namedAnnotations);
      try {
        await api.networking.createNamespacedNetworkPolicy({ namespace, body: claim });
      } catch (error) {
        if (statusCodeOf(error) === 409) throw new NameTakenSignal(named!);
        throw mapKubernetesError(error, { operation: "create the named sandbox's NetworkPolicy" });
      }
    }
    let podIsAnothers = false;
    try {
      if (denyEgress && !namedAnnotations) {
        try {
          await api.networking.createNamespacedNetworkPolicy({ namespace, body: buildDenyAllNetworkPolicy(sandboxId) });
        } catch (error) {
          throw mapKubernetesError(error, { operation: "create the sandbox's NetworkPolicy" });
        }
      }
      const body = buildSandboxPod({
        sandboxId,
        image,
        cpus: limits.cpus,
        memoryMiB: limits.memoryMiB,
        workspaceSizeMiB: resolved.workspaceSizeMiB,
        runAsUser: resolved.runAsUser,
        runtimeClassName: resolved.runtimeClassName,
        activeDeadlineSeconds: timeoutSeconds,
        expiresAt: new Date(Date.now() + timeoutSeconds * 1000),
        metadata: options.metadata,
        annotations: namedAnnotations,
      });
      try {
        await api.core.createNamespacedPod({ namespace, body });
      } catch (error) {
        // Holding the claim, a Pod of this name is one still being deleted, or one whose policy was removed out of band: never ours to delete.
        if (namedAnnotations && statusCodeOf(error) === 409) {
          podIsAnothers = true;
          throw new SandboxNotFoundError({
            backend: "k8s",
            sandboxId,
            message: `The Pod ${name} of the sandbox named ${JSON.stringify(named)} still exists without its NetworkPolicy (being deleted, or its policy removed by someone else); try again once it is gone.`,
          });
        }
        throw mapKubernetesError(error, { operation: "create the sandbox Pod" });
      }
      const pod = await waitForPodRunning({
        core: api.core,
        watch: api.watch,
        namespace,
        podName: name,
        labelSelector: `${SANDBOX_ID_LABEL}=${sandboxId}`,
        image,
        timeoutMs: resolved.createTimeoutMs,
        signal,
      });
      const notes: string[] = [
        `namespace ${namespace}; Pod ${name}; node address ${pod.status?.hostIP ?? "unknown"}.`,
        "All I/O transits the Kubernetes API server (pods/exec).",
      ];
      let network: PolicyRecord;
      if (denyEgress) {
        const outcomes = await proveEgressDenied(api, namespace, pod, resolved.probeTargets);
        const policy = await api.networking.readNamespacedNetworkPolicy({ namespace, name }).catch((error: unknown) => {
          throw mapKubernetesError(error, { operation: "read back the NetworkPolicy" });
        });
        network = {
          requested: { ...options.network },
          applied: {
            egress: "deny",
            networkPolicy: name,
            policyTypes: policy.spec?.policyTypes ?? [],
            egressRules: policy.spec?.egress ?? [],
            ingressRules: policy.spec?.ingress ?? [],
            probe: outcomes,
          },
          enforcement: `Kubernetes NetworkPolicy ${name} (egress: [], ingress: []) selecting only this Pod, created before it; enforcement by the cluster's network plugin proven at create from inside the Pod (${outcomes.map((outcome) => `${outcome.target} ${outcome.outcome}`).join(", ")}; sampled paths, not exhaustive); dnsPolicy None; commands reach the Pod through pods/exec, not its network.`,
        };
      } else {
        network = {
          requested: { ...options.network },
          applied: { egress: "allow", networkPolicy: null },
          enforcement: "No NetworkPolicy from sbx: the namespace's own policies and the cluster's defaults apply (usually all egress open).",
        };
      }
      const audit: DriverAudit = {
        backendVersion: `Kubernetes ${version}; ${KUBERNETES_CLIENT_VERSION}`,
        policies: {
          network,
          limits: limitsRecord(options.limits, pod),
          mounts: MOUNTS_RECORD,
          user: userRecord(pod),
          lifetime: lifetimeRecord(options.timeoutMs, pod),
          runtime: runtimeRecord(resolved, pod),
        },
        notes,
      };
      throwIfAborted(signal, "k8s");
      return new KubernetesDriver(api, {
        sandboxId,
        namespace,
        audit,
        ownsNetworkPolicy: denyEgress || namedAnnotations !== undefined,
        agentCommands: resolved.agentCommands,
      });
    } catch (error) {
      await deleteQuietly(api, namespace, name, { pod: !podIsAnothers });
      throw error;
    }
  }

  registerBackendManifest({
    backend: provider.backend,
    packageName: provider.packageName,
    capabilities: provider.capabilities,
    isolating: provider.isolating,
  });
  return provider;
}

/** Alias of `createSandboxProvider`: `createSandbox(kubernetes({ namespace: "sbx" }))`. */
export const kubernetes = createSandboxProvider;
