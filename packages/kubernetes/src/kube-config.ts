/**
 * The client-node configuration from settings: inline kubeconfig, a kubeconfig path, or client-node's defaults
 * (`KUBECONFIG`, `~/.kube/config`, the in-cluster service account), then the context asked for.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, Exec, KubeConfig, NetworkingV1Api, VersionApi, Watch } from "@kubernetes/client-node";
import type { KubernetesClients } from "./kubernetes-driver.js";
import type { ResolvedKubernetesSettings } from "./kubernetes-settings.js";

/** Why no configuration can be found without contacting anything, or undefined when one can. */
export function whyNoKubeconfig(settings: ResolvedKubernetesSettings, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  if (settings.kubeconfig || settings.kubeconfigPath) return undefined;
  if (environment.KUBECONFIG) return undefined;
  if (existsSync(join(homedir(), ".kube", "config"))) return undefined;
  if (environment.KUBERNETES_SERVICE_HOST && existsSync("/var/run/secrets/kubernetes.io/serviceaccount/token")) return undefined;
  return "No kubeconfig: settings.kubeconfig and settings.kubeconfigPath are unset, KUBECONFIG is unset, ~/.kube/config does not exist, and this is not a Pod with a service account.";
}

/** Loads the configuration (throws when the context does not exist) and makes the clients. */
export function loadClients(settings: ResolvedKubernetesSettings): KubernetesClients & { version: VersionApi; config: KubeConfig; watch: Watch } {
  const config = new KubeConfig();
  if (settings.kubeconfig) config.loadFromString(settings.kubeconfig);
  else if (settings.kubeconfigPath) config.loadFromFile(settings.kubeconfigPath);
  else config.loadFromDefault();
  if (settings.context) {
    if (!config.getContextObject(settings.context)) throw new Error(`the kubeconfig has no context named ${JSON.stringify(settings.context)}`);
    config.setCurrentContext(settings.context);
  }
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    networking: config.makeApiClient(NetworkingV1Api),
    version: config.makeApiClient(VersionApi),
    exec: new Exec(config),
    watch: new Watch(config),
  };
}
