import { randomBytes } from "node:crypto";
import type { CoreV1Api, Exec, NetworkingV1Api } from "@kubernetes/client-node";
import { ProviderError, SandboxNotFoundError, type SbxError } from "@sbx/core";
import {
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
import { CommandProcesses, killNotVerifiedError, newCommandTag } from "./command-processes.js";
import { KILL_NOT_VERIFIED_EXIT_CODE, VERIFIED_KILL_SCRIPT, verifiedKillArgv } from "./verified-kill.js";

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
  /**
   * Which path commands take (ADR 0051): `"start"` (default) through the sbx agent, started by the first command;
   * `"background"` the same, the first command not waiting for the agent (it runs as one exec);
   * `"warm"` through the agent once a code call started it; `"off"` one exec each.
   */
  readonly agentCommands?: "start" | "background" | "warm" | "off";
}

/** How long `destroy` waits for the Pod object to disappear after the delete, in ms. */
const POD_GONE_BOUND_MS = 10_000;

/** Pod phases after which the sandbox's processes are gone for good. */
const FINISHED_PHASES = new Set(["Succeeded", "Failed"]);

/**
 * One sandbox Pod as an sbx driver (ADR 0048, ADR 0051): every process it spawns is one `pods/exec` stream (command
 * and environment sent on stdin, not in the URL); core carries the sbx agent over one such stream (`codeAgent`), and
 * commands, files, code, terminals and file watching go through it; kills run the verified process-tree kill in the
 * Pod by the process id (recorded in the Pod for an exec, reported by the agent for its commands); `probe` reads the
 * Pod's phase.
 */
export class KubernetesDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace = KUBERNETES_WORKSPACE;
  readonly audit: DriverAudit;
  /**
   * The sbx agent, started through `spawn` (one exec that stays open): code, rich results, terminals and file watching,
   * and commands unless `agentCommands` is `"off"`, each killed by its process id with the verified tree kill (ADR 0051).
   */
  readonly codeAgent: DriverCodeAgent;
  /** The agent's commands by tag, and their kill. */
  readonly commandProcesses: CommandProcesses;
  private destroyed: Promise<void> | undefined;
  private readonly podName: string;

  constructor(
    private readonly clients: KubernetesClients,
    private readonly options: KubernetesDriverOptions,
  ) {
    this.id = options.sandboxId;
    this.audit = options.audit;
    this.podName = objectNameOf(options.sandboxId);
    this.commandProcesses = new CommandProcesses({
      sandboxId: options.sandboxId,
      killTree: (processId) => this.killTree(processId),
      endSandbox: (reason) => this.endSandbox(reason),
    });
    const agentCommands = options.agentCommands ?? "start";
    this.codeAgent = {
      commands: agentCommands === "off" ? "driver" : "agent",
      commandsStartAgent: agentCommands === "start" || (agentCommands === "background" ? "background" : false),
      enforcement: {
        spawnAgent: (request) => this.spawn(request),
        newTag: newCommandTag,
        killTagged: this.commandProcesses.killTagged,
        // The Pod's cgroup counter is not read: a SIGKILL sbx did not send reports `outOfMemoryKilled: null` (unknown).
        outOfMemoryKilled: () => Promise.resolve(null),
        lostError: (cause) => this.lostError(cause),
        commandProcesses: { started: this.commandProcesses.started, ended: this.commandProcesses.ended },
      },
    };
  }

  /** The lost-sandbox error when the Pod is gone, else undefined (asked by core after a failure or an unexplained SIGKILL). */
  private async lostError(cause?: unknown): Promise<Error | undefined> {
    if ((await this.probe()) !== "gone") return undefined;
    return new SandboxNotFoundError({ backend: "k8s", sandboxId: this.id, cause, message: `The sandbox's Pod is gone (sandbox ${this.id}).` });
  }

  /** Ends the sandbox after a kill that could not be verified (as Docker does) and returns the error to report. */
  private async endSandbox(reason: string): Promise<Error> {
    await this.destroy().catch(() => {});
    return new SandboxNotFoundError({ backend: "k8s", sandboxId: this.id, message: `The sandbox was ended: ${reason} (sandbox ${this.id}).` });
  }

  /**
   * The verified process-tree kill of `processId` in a separate exec (no stdin). Survivors end the sandbox; the Pod
   * being deleted by sbx counts as killed (its deletion ends everything).
   */
  private async killTree(processId: number): Promise<void> {
    if (this.destroyed) return;
    const stderr: Uint8Array[] = [];
    let code: number;
    try {
      const killer = await this.openExec(
        verifiedKillArgv(processId),
        () => {},
        (chunk) => stderr.push(chunk),
        false,
      );
      code = await killer.exitCode;
    } catch (error) {
      if (this.destroyed) return;
      throw (await this.lostError(error)) ?? this.failure(error, "kill a command");
    }
    if (code === 0 || this.destroyed) return;
    const detail = Buffer.concat(stderr).toString("utf8");
    if (code === KILL_NOT_VERIFIED_EXIT_CODE) throw await this.endSandbox(`a command's processes survived the kill: ${detail.slice(0, 300)}`);
    throw killNotVerifiedError(this.id, `exit ${code}: ${detail}`);
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
            killInvocation(spawnId, VERIFIED_KILL_SCRIPT),
            () => {},
            (chunk) => stderr.push(chunk),
            false,
          );
          code = await killer.exitCode;
        } catch (error) {
          if (exited || this.destroyed) return;
          throw this.failure(error, "kill a command");
        }
        if (code === 0 || exited || this.destroyed) return;
        const detail = Buffer.concat(stderr).toString("utf8");
        if (code === KILL_NOT_VERIFIED_EXIT_CODE) throw await this.endSandbox(`a command's processes survived the kill: ${detail.slice(0, 300)}`);
        throw killNotVerifiedError(this.id, `exit ${code}: ${detail}`);
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
