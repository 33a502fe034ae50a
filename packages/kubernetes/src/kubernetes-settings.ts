import { validate } from "@sbx/core/adapter";
import { z } from "zod";

/** A `host:port` the create-time egress probe must fail to reach (an IPv4 address or a DNS name, then a port). */
const probeTargetSchema = z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, "must be host:port");

/**
 * Settings of the Kubernetes provider (ADR 0048). Every field is optional; unknown fields are refused (a typo such as
 * `namespce` would otherwise put sandboxes somewhere else silently).
 */
export const kubernetesSettingsSchema = z
  .object({
    /** Namespace every sandbox's Pod and NetworkPolicy go in. Default `"sbx"`: give sbx its own (pods/exec there is root-equivalent in every Pod of it). */
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
      .max(63)
      .optional(),
    /** Image for `k8s://` with nothing after the scheme. Default `"python:3.12-slim"` (the image needs python3 for the sbx agent). */
    defaultImage: z.string().min(1).max(512).optional(),
    /** The kubeconfig context to use. Default: the kubeconfig's current context. */
    context: z.string().min(1).optional(),
    /** A kubeconfig's content (YAML or JSON). Default: `kubeconfigPath`, else `KUBECONFIG`, `~/.kube/config`, or the in-cluster service account. */
    kubeconfig: z.string().min(1).optional(),
    /** Path of a kubeconfig file. Default: as `kubeconfig`. */
    kubeconfigPath: z.string().min(1).optional(),
    /** `runtimeClassName` of every Pod (for example `"gvisor"` or `"kata"`), recorded in the audit record. Default: none (the cluster's default runtime). */
    runtimeClassName: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
      .max(253)
      .optional(),
    /** Size of the workspace `emptyDir` in MiB. Default 1024. */
    workspaceSizeMiB: z.number().int().min(16).max(1_048_576).optional(),
    /** CPU cores requested and limited when `limits.cpus` is not given. Default 1. */
    defaultCpus: z.number().positive().max(1024).optional(),
    /** Memory in MiB requested and limited when `limits.memoryMiB` is not given. Default 1024. */
    defaultMemoryMiB: z.number().int().min(16).max(4_194_304).optional(),
    /** The uid (and gid) sandbox processes run as; never 0. Default 1000. */
    runAsUser: z.number().int().min(1).max(2_147_483_647).optional(),
    /** How long a Pod may take to be scheduled, pull its image and start, in ms. Default 120000. */
    createTimeoutMs: z.number().int().min(1_000).max(3_600_000).optional(),
    /** More addresses the create-time egress probe must fail to reach, besides the API server's Service and the node's kubelet. Default none. */
    probeTargets: z.array(probeTargetSchema).max(16).optional(),
    /**
     * Which path commands take (ADR 0051). `"start"` (default): through the sbx agent over one exec stream, which the
     * first command starts and waits for (an image without python3 stays on one exec each); `"background"`: the first
     * command starts the agent without waiting and runs as one exec, later ones take the agent once it runs; `"warm"`:
     * through the agent once a code call started it; `"off"`: one `pods/exec` per command. Kills are the verified
     * process-tree kill on every path.
     */
    agentCommands: z.enum(["start", "background", "warm", "off"]).optional(),
  })
  .strict();

/** Settings of the Kubernetes provider before validation. */
export type KubernetesSettings = z.input<typeof kubernetesSettingsSchema>;

/** Settings after validation, with defaults applied. */
export interface ResolvedKubernetesSettings {
  readonly namespace: string;
  readonly defaultImage: string;
  readonly context: string | undefined;
  readonly kubeconfig: string | undefined;
  readonly kubeconfigPath: string | undefined;
  readonly runtimeClassName: string | undefined;
  readonly workspaceSizeMiB: number;
  readonly defaultCpus: number;
  readonly defaultMemoryMiB: number;
  readonly runAsUser: number;
  readonly createTimeoutMs: number;
  readonly probeTargets: readonly string[];
  readonly agentCommands: "start" | "background" | "warm" | "off";
}

/** Validates provider settings; throws `InvalidArgumentError` naming the field (`settings.namespace`). */
export function parseKubernetesSettings(settings: unknown): ResolvedKubernetesSettings {
  const data = validate(kubernetesSettingsSchema, settings ?? {}, "settings");
  return {
    namespace: data.namespace ?? "sbx",
    defaultImage: data.defaultImage ?? "python:3.12-slim",
    context: data.context,
    kubeconfig: data.kubeconfig,
    kubeconfigPath: data.kubeconfigPath,
    runtimeClassName: data.runtimeClassName,
    workspaceSizeMiB: data.workspaceSizeMiB ?? 1024,
    defaultCpus: data.defaultCpus ?? 1,
    defaultMemoryMiB: data.defaultMemoryMiB ?? 1024,
    runAsUser: data.runAsUser ?? 1000,
    createTimeoutMs: data.createTimeoutMs ?? 120_000,
    probeTargets: data.probeTargets ?? [],
    agentCommands: data.agentCommands ?? "start",
  };
}
