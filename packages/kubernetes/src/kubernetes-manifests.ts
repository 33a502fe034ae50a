/**
 * The objects the adapter creates, as pure functions (ADR 0048): a deny-all NetworkPolicy selecting one sandbox's
 * Pod, and the hardened Pod. Neither ever carries an environment variable: the sandbox's env and secrets reach
 * processes over the exec stream at run time, never a Pod spec anyone with `get pods` can read.
 */
import { createHash } from "node:crypto";
import type { V1NetworkPolicy, V1Pod } from "@kubernetes/client-node";

/** Label every object the adapter creates carries (for listing and sweeping). */
export const MANAGED_LABEL = "sbx.dev/managed";
/** Label carrying the sandbox id. */
export const SANDBOX_ID_LABEL = "sbx.dev/sandbox-id";
/** Annotation with the time the sandbox's lifetime ends (ISO 8601), for the sweeper. */
export const EXPIRES_AT_ANNOTATION = "sbx.dev/expires-at";
/** Annotation with the caller's metadata (JSON): the whole of it, losslessly (labels cannot hold every value). */
export const METADATA_ANNOTATION = "sbx.dev/metadata";
/** Annotation with the name a sandbox was created under by `getOrCreateSandbox` (ADR 0058). */
export const NAME_ANNOTATION = "sbx.dev/name";
/** Annotation with the policy a named sandbox was created with (JSON `RecordedPolicy`), compared by callers attaching to it. */
export const POLICY_ANNOTATION = "sbx.dev/policy";
/** Prefix of the labels copying the metadata entries a Kubernetes label can hold, so a label selector can narrow `list` by them. */
export const METADATA_LABEL_PREFIX = "metadata.sbx.dev/";
/** The one container of every sandbox Pod. */
export const SANDBOX_CONTAINER = "sandbox";
/** The workspace inside the Pod (an `emptyDir`). */
export const KUBERNETES_WORKSPACE = "/workspace";

/**
 * PID 1 of the sandbox container: sleeps, reaps the orphans commands leave behind (they are re-parented to it), and
 * exits 0 on SIGTERM. Python's stdlib, as the agent needs python3 anyway.
 */
export const PID1_SCRIPT = [
  "import os, signal, time",
  "signal.signal(signal.SIGTERM, lambda *_: os._exit(0))",
  "while True:",
  "    try:",
  "        os.waitpid(-1, 0)",
  "    except ChildProcessError:",
  "        time.sleep(0.1)",
].join("\n");

/** The name of a sandbox's Pod and NetworkPolicy. */
export function objectNameOf(sandboxId: string): string {
  return `sbx-${sandboxId}`;
}

/**
 * The sandbox id of a named sandbox: 16 hex digits of SHA-256 over the name, so its Pod and NetworkPolicy have names
 * every caller derives alike (`sbx-<id>`) and the API server's uniqueness of names decides who creates (ADR 0058). The
 * name itself is in the objects' `sbx.dev/name` annotation, checked on attach (a digest collision is refused, not joined).
 */
export function namedSandboxIdOf(name: string): string {
  return createHash("sha256").update(`sbx.dev/name\n${name}`).digest("hex").slice(0, 16);
}

/** What a named sandbox records of its creator's policy (egress, user, the limits applied). */
export interface RecordedPolicy {
  readonly egress: "allow" | "deny";
  readonly user: string;
  readonly cpus: number;
  readonly memoryMiB: number;
}

/**
 * The claim of a named sandbox whose egress is allowed: a NetworkPolicy of the sandbox's name that selects only its Pod
 * and restricts ingress alone (no rule: no ingress; egress untouched). The policy name is the claim every caller makes
 * first, whatever its egress, so a deny-all creator and an allow creator cannot both win (ADR 0058).
 */
export function buildIngressOnlyClaimPolicy(sandboxId: string, annotations: Readonly<Record<string, string>>): V1NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: objectNameOf(sandboxId), labels: sandboxLabels(sandboxId), annotations: { ...annotations } },
    spec: { podSelector: { matchLabels: { [SANDBOX_ID_LABEL]: sandboxId } }, policyTypes: ["Ingress"], ingress: [] },
  };
}

/** Whether `policy` denies all egress (lists `Egress` in its types and has no egress rule). */
export function deniesAllEgress(policy: V1NetworkPolicy): boolean {
  return (policy.spec?.policyTypes ?? []).includes("Egress") && (policy.spec?.egress ?? []).length === 0;
}

/** The labels of a sandbox's objects. */
export function sandboxLabels(sandboxId: string): Record<string, string> {
  return { [MANAGED_LABEL]: "true", [SANDBOX_ID_LABEL]: sandboxId, "app.kubernetes.io/managed-by": "sbx" };
}

/** The deny-all NetworkPolicy of one sandbox: no ingress, no egress (DNS included), selecting only its Pod. */
export function buildDenyAllNetworkPolicy(sandboxId: string, annotations?: Readonly<Record<string, string>>): V1NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: objectNameOf(sandboxId), labels: sandboxLabels(sandboxId), ...(annotations ? { annotations: { ...annotations } } : {}) },
    spec: {
      podSelector: { matchLabels: { [SANDBOX_ID_LABEL]: sandboxId } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: [],
    },
  };
}

/** What the Pod is built from. */
export interface PodPlan {
  readonly sandboxId: string;
  readonly image: string;
  /** CPU cores, requested and limited. */
  readonly cpus: number;
  /** Memory in MiB, requested and limited. */
  readonly memoryMiB: number;
  readonly workspaceSizeMiB: number;
  readonly runAsUser: number;
  readonly runtimeClassName: string | undefined;
  /** `activeDeadlineSeconds`, or undefined for none. */
  readonly activeDeadlineSeconds: number | undefined;
  readonly expiresAt: Date | undefined;
  /** The caller's metadata (not secret: it is returned by `list` too). */
  readonly metadata: Readonly<Record<string, string>>;
  /** Further annotations (a named sandbox's name and recorded policy). */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A Kubernetes label name or value grammar: 63 characters at most, alphanumerics at both ends, `-`, `_`, `.` inside. */
const LABEL_TEXT = /^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)$/;

/**
 * The `metadata.sbx.dev/<key>` label of a metadata entry, or undefined when Kubernetes refuses the key as a label name or
 * the value as a label value (sbx allows values of 256 characters and any characters; the annotation keeps those).
 */
export function metadataLabelOf(key: string, value: string): [string, string] | undefined {
  if (!LABEL_TEXT.test(key)) return undefined;
  if (value !== "" && !LABEL_TEXT.test(value)) return undefined;
  return [`${METADATA_LABEL_PREFIX}${key}`, value];
}

/** The labels copying every metadata entry a label can hold (see `metadataLabelOf`). */
export function metadataLabelsOf(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const label = metadataLabelOf(key, value);
    if (label) labels[label[0]] = label[1];
  }
  return labels;
}

/** Every label of a sandbox's Pod: its sandbox labels and the metadata labels (what another NetworkPolicy could select it by). */
export function podLabelsOf(sandboxId: string, metadata: Readonly<Record<string, string>>): Record<string, string> {
  return { ...metadataLabelsOf(metadata), ...sandboxLabels(sandboxId) };
}

/** CPU cores as a Kubernetes quantity in millicores (`1500m`). */
export function cpuQuantity(cpus: number): string {
  return `${Math.max(1, Math.round(cpus * 1000))}m`;
}

/** The hardened sandbox Pod (ADR 0048): non-root, no privilege escalation, no capabilities, read-only root, sized emptyDirs, no token, seccomp RuntimeDefault, requests = limits. */
export function buildSandboxPod(plan: PodPlan): V1Pod {
  const resources = { cpu: cpuQuantity(plan.cpus), memory: `${plan.memoryMiB}Mi` };
  const annotations: Record<string, string> = {
    ...plan.annotations,
    "sbx.dev/spec-version": "1",
    [METADATA_ANNOTATION]: JSON.stringify(plan.metadata),
  };
  if (plan.expiresAt) annotations[EXPIRES_AT_ANNOTATION] = plan.expiresAt.toISOString();
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: objectNameOf(plan.sandboxId),
      labels: podLabelsOf(plan.sandboxId, plan.metadata),
      annotations,
    },
    spec: {
      restartPolicy: "Never",
      activeDeadlineSeconds: plan.activeDeadlineSeconds,
      terminationGracePeriodSeconds: 5,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      shareProcessNamespace: false,
      // Nothing in the Pod points at the cluster's DNS: were a policy not enforced, names still would not resolve.
      dnsPolicy: "None",
      dnsConfig: { nameservers: ["127.0.0.1"] },
      runtimeClassName: plan.runtimeClassName,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: plan.runAsUser,
        runAsGroup: plan.runAsUser,
        fsGroup: plan.runAsUser,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: SANDBOX_CONTAINER,
          image: plan.image,
          imagePullPolicy: "IfNotPresent",
          command: ["python3", "-c", PID1_SCRIPT],
          workingDir: KUBERNETES_WORKSPACE,
          resources: { requests: resources, limits: resources },
          securityContext: {
            runAsNonRoot: true,
            runAsUser: plan.runAsUser,
            runAsGroup: plan.runAsUser,
            privileged: false,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          },
          volumeMounts: [
            { name: "workspace", mountPath: KUBERNETES_WORKSPACE },
            { name: "tmp", mountPath: "/tmp" },
          ],
        },
      ],
      volumes: [
        { name: "workspace", emptyDir: { sizeLimit: `${plan.workspaceSizeMiB}Mi` } },
        { name: "tmp", emptyDir: { sizeLimit: "256Mi" } },
      ],
    },
  };
}
