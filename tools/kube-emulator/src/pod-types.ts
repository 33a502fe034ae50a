/** The parts of a Pod and a NetworkPolicy the emulator reads (the rest is stored as the client sent it). */
import type { StoredObject } from "./object-store.js";

/** A container of a Pod spec, as far as the emulator reads it. */
export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: Array<{ name: string; value?: string }>;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  securityContext?: {
    runAsUser?: number;
    runAsGroup?: number;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}

/** A Pod spec, as far as the emulator reads it. */
export interface PodSpec {
  containers: ContainerSpec[];
  activeDeadlineSeconds?: number;
  runtimeClassName?: string;
  securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number; runAsNonRoot?: boolean };
  volumes?: Array<{ name: string; emptyDir?: { sizeLimit?: string; medium?: string } }>;
}

/** A stored Pod. */
export interface PodObject extends StoredObject {
  spec: PodSpec;
  status?: Record<string, unknown>;
}

/** A stored NetworkPolicy. */
export interface NetworkPolicyObject extends StoredObject {
  spec: {
    podSelector?: { matchLabels?: Record<string, string> };
    policyTypes?: string[];
    egress?: unknown[];
    ingress?: unknown[];
  };
}

/** Parses a Kubernetes quantity of bytes (`256Mi`, `1Gi`, `500M`, `1000`) to bytes. */
export function parseByteQuantity(quantity: string | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T|k)?$/.exec(quantity.trim());
  if (!match) return undefined;
  const factors: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, K: 1e3, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Math.round(Number(match[1]) * (match[2] ? factors[match[2]]! : 1));
}

/** Parses a Kubernetes CPU quantity (`1`, `500m`, `0.5`) to cores. */
export function parseCpuQuantity(quantity: string | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(m)?$/.exec(quantity.trim());
  if (!match) return undefined;
  return match[2] ? Number(match[1]) / 1000 : Number(match[1]);
}
