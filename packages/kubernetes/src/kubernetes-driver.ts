import { randomBytes } from "node:crypto";
import type { CoreV1Api, Exec, NetworkingV1Api } from "@kubernetes/client-node";
import { ProviderError, type SbxError } from "@sbx/core";
import {
  KILL_PROCESS_TREE_SCRIPT,
  type DriverAudit,
  type DriverCodeAgent,
  type ProbeAnswer,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
} from "@sbx/core/adapter";
import { KUBERNETES_WORKSPACE, objectNameOf, SANDBOX_CONTAINER } from "./kubernetes-manifests.js";
import { mapKubernetesError, statusCodeOf } from "./map-kubernetes-error.js";
import { openPodExec, type PodExec } from "./pod-exec.js";
import { killInvocation, spawnInvocation } from "./spawn-header.js";

/** The clients a driver uses. */
export interface KubernetesClients {
  readonly core: CoreV1Api;
  readonly networking: NetworkingV1Api;
  readonly exec: Exec;
}

/** What `KubernetesDriver` needs besides the clients. */
export interface KubernetesDriverOptions {
  readonly sandboxId: string;
  readonly namespace: string;
  readonly audit: DriverAudit;
  /** Whether a NetworkPolicy of this sandbox exists (deleted with it). */
  readonly ownsNetworkPolicy: boolean;
}

/** How long `destroy` waits for the Pod object to disappear after the delete, in ms. */
const POD_GONE_BOUND_MS = 10_000;

/** Pod phases after which the sandbox's processes are gone for good. */
const FINISHED_PHASES = new Set(["Succeeded", "Failed"]);

/**
 * One sandbox Pod as an sbx driver (ADR 0048): every process is one `pods/exec` stream (command and environment sent
 * on stdin, not in the URL); kills run the process-tree kill in the Pod by the recorded process id; `probe` reads the
 * Pod's phase. Files are core's defaults over `spawn`; code and rich results are the sbx agent, which core carries
 * over one `spawn` (`codeAgent`).
 */
export class KubernetesDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace = KUBERNETES_WORKSPACE;
  readonly audit: DriverAudit;
  /** Core starts the sbx agent through `spawn` for code; commands stay one exec each. */
  readonly codeAgent: DriverCodeAgent = { commands: "driver" };
  private destroyed: Promise<void> | undefined;
  private readonly podName: string;

  constructor(
    private readonly clients: KubernetesClients,
    private readonly options: KubernetesDriverOptions,
  ) {
    this.id = options.sandboxId;
    this.audit = options.audit;
    this.podName = objectNameOf(options.sandboxId);
  }

  /** The API clients, for the adapter's escape hatch (outside the portable contract). */
  get native(): unknown {
    return { ...this.clients, namespace: this.options.namespace, podName: this.podName };
  }

  private failure(error: unknown, operation: string): SbxError {
    return mapKubernetesError(error, { operation, sandboxId: this.id });
  }

  /** `"gone"` when the Pod is deleted, being deleted, or finished (deadline, node lost); `"running"` otherwise; `"unknown"` when the API could not say. */
  async probe(): Promise<ProbeAnswer> {
    try {
      const pod = await this.clients.core.readNamespacedPod({ namespace: this.options.namespace, name: this.podName });
      if (pod.metadata?.deletionTimestamp) return "gone";
      return FINISHED_PHASES.has(pod.status?.phase ?? "") ? "gone" : "running";
    } catch (error) {
      return statusCodeOf(error) === 404 ? "gone" : "unknown";
    }
  }

  private openExec(command: string[], onStdout: (chunk: Uint8Array) => void, onStderr: (chunk: Uint8Array) => void, stdin = true): Promise<PodExec> {
    return openPodExec({
      exec: this.clients.exec,
      namespace: this.options.namespace,
      pod: this.podName,
      container: SANDBOX_CONTAINER,
      command,
      onStdout,
      onStderr,
      stdin,
    });
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const spawnId = randomBytes(8).toString("hex");
    const invocation = spawnInvocation(request, spawnId);
    let stream: PodExec;
    try {
      stream = await this.openExec(invocation.argv, request.onStdout, request.onStderr);
      await stream.write(invocation.header);
    } catch (error) {
      throw this.failure(error, "start a command");
    }
    let exited = false;
    const exit = stream.exitCode.then(
      (exitCode) => {
        exited = true;
        return { exitCode };
      },
      (error: unknown) => {
        exited = true;
        if (this.destroyed) return { exitCode: 137 };
        throw new ProviderError({ backend: "k8s", cause: error, message: `The command's exec stream failed (sandbox ${this.id}): ${String(error)}` });
      },
    );
    let killing: Promise<void> | undefined;
    const kill = () => {
      killing ??= (async () => {
        if (exited || this.destroyed) return;
        const stderr: Uint8Array[] = [];
        let code: number;
        try {
          const killer = await this.openExec(
            killInvocation(spawnId, KILL_PROCESS_TREE_SCRIPT),
            () => {},
            (chunk) => stderr.push(chunk),
            false,
          );
          code = await killer.exitCode;
        } catch (error) {
          if (exited || this.destroyed) return;
          throw this.failure(error, "kill a command");
        }
        if (code !== 0 && !exited) {
          throw new ProviderError({
            backend: "k8s",
            message: `The process-tree kill in the Pod exited ${code} (sandbox ${this.id}): ${Buffer.concat(stderr).toString("utf8").slice(0, 500)}`,
          });
        }
      })();
      return killing;
    };
    return {
      pid: spawnId,
      exit,
      writeStdin: async (data) => {
        try {
          await stream.write(data);
        } catch (error) {
          if (exited) return;
          throw this.failure(error, "write to stdin");
        }
      },
      closeStdin: async () => {
        if (exited) return;
        if (stream.protocol !== "v5.channel.k8s.io") {
          throw new ProviderError({
            backend: "k8s",
            message: `This API server speaks ${stream.protocol || "an old exec protocol"}, which cannot close a command's stdin without ending the command; Kubernetes 1.30 or later (v5.channel.k8s.io) is needed.`,
          });
        }
        stream.closeStdin();
      },
      kill,
    };
  }

  async destroy(): Promise<void> {
    this.destroyed ??= (async () => {
      const namespace = this.options.namespace;
      try {
        await this.clients.core.deleteNamespacedPod({ namespace, name: this.podName, gracePeriodSeconds: 0, propagationPolicy: "Background" });
      } catch (error) {
        if (statusCodeOf(error) !== 404) throw mapKubernetesError(error, { operation: "delete the Pod" });
      }
      if (this.options.ownsNetworkPolicy) {
        await this.clients.networking.deleteNamespacedNetworkPolicy({ namespace, name: this.podName }).catch((error: unknown) => {
          if (statusCodeOf(error) !== 404) throw mapKubernetesError(error, { operation: "delete the NetworkPolicy" });
        });
      }
      const started = Date.now();
      while (Date.now() - started < POD_GONE_BOUND_MS) {
        const gone = await this.clients.core.readNamespacedPod({ namespace, name: this.podName }).then(
          () => false,
          (error: unknown) => statusCodeOf(error) === 404,
        );
        if (gone) return;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    return this.destroyed;
  }
}
