export { createSandboxProvider, kubernetes, DEFAULT_KUBERNETES_IMAGE, KUBERNETES_CLIENT_VERSION } from "./kubernetes-provider.js";
export { KUBERNETES_CAPABILITIES } from "./kubernetes-capabilities.js";
export {
  kubernetesSettingsSchema,
  parseKubernetesSettings,
  type KubernetesSettings,
  type ResolvedKubernetesSettings,
} from "./kubernetes-settings.js";
export { ImagePullError, PodUnschedulableError, type PodEvent } from "./kubernetes-errors.js";
export {
  buildDenyAllNetworkPolicy,
  buildSandboxPod,
  objectNameOf,
  sandboxLabels,
  KUBERNETES_WORKSPACE,
  MANAGED_LABEL,
  SANDBOX_ID_LABEL,
  type PodPlan,
} from "./kubernetes-manifests.js";
export { listKubernetesSandboxIds, sweepKubernetesOrphans } from "./kubernetes-sweep.js";
export { mapKubernetesError } from "./map-kubernetes-error.js";
