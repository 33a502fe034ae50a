/**
 * One emulated Modal Sandbox: a Docker container plus the state Modal's control plane and task command router keep
 * for it (execs, tags, result, lifetime). The emulator's own timer ends the sandbox at its deadline, recording the
 * result before the container goes, as Modal does (a command killed by the sandbox's end then meets a finished
 * sandbox when the client asks). The container's PID 1 sleeps until a backstop a few seconds past that deadline
 * (written into the container), so a leaked container still ends if the emulator dies, and never before the timer.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type Docker from "dockerode";
import type { WarmContainerPool } from "@sbx/emulator-kit";
import { EmulatedExec, type ExecRequest } from "./emulated-exec.js";
import {
  describeFirewallRule,
  installFirewallRules,
  planNetwork,
  removeFirewallRules,
  type EmulatorNetworkPlan,
  type FirewallRule,
  type NetworkAccessMessage,
} from "./network-policy.js";
import { lifetimeCommand, prepareContainer, shapeKey, writeDeadline, type ContainerShape, type PreparedContainer } from "./sandbox-container.js";

export { EMULATOR_INSTANCE_LABEL, EMULATOR_LABEL } from "./sandbox-container.js";

/**
 * Longest a container waits among those started ahead of demand before it is discarded instead of used, in
 * milliseconds; its own backstop deadline is this plus a minute, so a sandbox taking it moves it long before.
 */
export const WARM_CONTAINER_MAX_AGE_MS = 120_000;

/** Modal's `GenericResult.status`. */
export const RESULT_STATUS = { UNSPECIFIED: 0, SUCCESS: 1, FAILURE: 2, TERMINATED: 3, TIMEOUT: 4 } as const;

/** Modal's `GenericResult`, as the emulator sends it. */
export interface GenericResultMessage {
  status: number;
  exception?: string;
  exitcode?: number;
}

/** What the create request defined, kept for introspection (`GET`-style through `emulator.inspectSandbox`). */
export interface SandboxDefinitionRecord {
  readonly appId: string;
  readonly imageId: string;
  readonly imageTag: string | undefined;
  readonly entrypointArgs: string[];
  readonly timeoutSeconds: number;
  readonly idleTimeoutSeconds: number | undefined;
  readonly workdir: string | undefined;
  readonly networkAccess: NetworkAccessMessage | undefined;
  readonly resources: { milliCpu?: number; milliCpuMax?: number; memoryMb?: number; memoryMbMax?: number } | undefined;
  readonly name: string | undefined;
  readonly environment: Record<string, string>;
}

/** What `emulator.inspectSandbox(id)` reports: what was asked for and what the emulator enforces. */
export interface SandboxEnforcementReport {
  readonly sandboxId: string;
  readonly containerId: string;
  readonly containerAddress: string | null;
  readonly definition: Omit<SandboxDefinitionRecord, "environment"> & { environmentNames: string[] };
  readonly network: EmulatorNetworkPlan;
  readonly firewallRules: string[];
  readonly dockerResources: { nanoCpus: number | undefined; memoryBytes: number | undefined };
  readonly result: GenericResultMessage | undefined;
}

/** Options to start a sandbox container. */
export interface EmulatedSandboxOptions {
  readonly docker: Docker;
  readonly image: string;
  readonly instanceId: string;
  readonly networkName: string;
  readonly definition: SandboxDefinitionRecord;
  readonly tags: Map<string, string>;
  readonly onGone: (sandbox: EmulatedSandbox) => void;
  /** Mint a V1-shaped id (`sb-` + 22 alphanumerics), for sandboxes made through the V1 `SandboxCreate` (modal 0.10's default path). */
  readonly v1Id?: boolean;
  /** Containers started ahead of demand (ADR 0041); without it every create starts its own. */
  readonly warmContainers?: WarmContainerPool<PreparedContainer>;
}

function v1SandboxId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return `sb-${[...randomBytes(22)].map((byte) => alphabet[byte % alphabet.length]).join("")}`;
}

/**
 * Seconds the container's own backstop waits past the sandbox deadline. Were it the deadline itself, the container
 * could stop (and its execs die) before the emulator's timer recorded the sandbox as timed out: a client asking then
 * would see a running sandbox and a command killed by SIGKILL, which Modal never reports.
 */
const BACKSTOP_SLACK_SECONDS = 5;

/** The Docker resources a definition asks for (a hard limit where Modal has a max). */
function dockerResourcesOf(definition: SandboxDefinitionRecord): { nanoCpus: number | undefined; memoryBytes: number | undefined } {
  const resources = definition.resources;
  const milliCpu = resources?.milliCpuMax || resources?.milliCpu || undefined;
  const memoryMb = resources?.memoryMbMax || resources?.memoryMb || undefined;
  return { nanoCpus: milliCpu ? milliCpu * 1_000_000 : undefined, memoryBytes: memoryMb ? memoryMb * 1024 * 1024 : undefined };
}

/** An emulated sandbox backed by a container. */
export class EmulatedSandbox {
  readonly id: string;
  readonly taskId = `ta-emu-${randomUUID()}`;
  readonly createdAt = Date.now() / 1000;
  readonly execs = new Map<string, EmulatedExec>();
  readonly network: EmulatorNetworkPlan;
  readonly container: Docker.Container;
  readonly containerId: string;
  readonly containerAddress: string | null;
  firewallRules: FirewallRule[] = [];
  result: GenericResultMessage | undefined;
  private lastActivity = Date.now();
  private lifetimeTimer: NodeJS.Timeout | undefined;
  /** When the sandbox's lifetime ends (epoch milliseconds), fixed when the create request arrived. */
  private readonly deadlineMs: number;
  private idleTimer: NodeJS.Timeout | undefined;
  private ending: Promise<void> | undefined;
  private readonly resultWaiters = new Set<() => void>();

  private constructor(
    readonly options: EmulatedSandboxOptions,
    prepared: PreparedContainer,
    network: EmulatorNetworkPlan,
    deadlineMs: number,
  ) {
    this.id = prepared.sandboxId;
    this.container = prepared.container;
    this.containerId = prepared.containerId;
    this.containerAddress = prepared.containerAddress;
    this.network = network;
    this.deadlineMs = deadlineMs;
  }

  /**
   * Takes a container started ahead of demand (ADR 0041; only for the default entrypoint) or starts one now, then
   * applies what belongs to this sandbox: the backstop deadline and the firewall rules of its network policy.
   */
  static async start(options: EmulatedSandboxOptions): Promise<EmulatedSandbox> {
    const { definition } = options;
    const deadlineMs = Date.now() + definition.timeoutSeconds * 1000;
    const backstopSeconds = (atMs: number) => Math.ceil(atMs / 1000) + BACKSTOP_SLACK_SECONDS;
    const network = planNetwork(definition.networkAccess);
    const { nanoCpus, memoryBytes } = dockerResourcesOf(definition);
    const shape: ContainerShape = {
      docker: options.docker,
      image: options.image,
      instanceId: options.instanceId,
      networkMode: network.mode === "none" ? "none" : options.networkName,
      workdir: definition.workdir,
      nanoCpus,
      memoryBytes,
    };
    // V2 ids must not look like V1 ids, or the SDK switches to the V1 RPCs for fromId, wait and terminate.
    const newId = () => (options.v1Id ? v1SandboxId() : `sb-emu-${randomUUID()}`);
    const ownEntrypoint = definition.entrypointArgs.length > 0;
    const warm = ownEntrypoint
      ? undefined
      : await options.warmContainers?.take(shapeKey(shape, options.v1Id ? "v1" : "v2"), () =>
          prepareContainer(shape, newId(), lifetimeCommand(backstopSeconds(Date.now() + WARM_CONTAINER_MAX_AGE_MS) + 60), {}),
        );
    const prepared =
      warm ??
      (await prepareContainer(
        shape,
        newId(),
        ownEntrypoint ? definition.entrypointArgs : lifetimeCommand(backstopSeconds(deadlineMs)),
        ownEntrypoint ? definition.environment : {},
      ));
    const sandbox = new EmulatedSandbox(options, prepared, network, deadlineMs);
    try {
      if (warm) await writeDeadline(sandbox.container, backstopSeconds(deadlineMs));
      await sandbox.claimContainer();
    } catch (error) {
      await sandbox.end({ status: RESULT_STATUS.FAILURE, exception: String(error) });
      throw error;
    }
    sandbox.armTimers();
    return sandbox;
  }

  get definition(): SandboxDefinitionRecord {
    return this.options.definition;
  }

  get tags(): Map<string, string> {
    return this.options.tags;
  }

  /** True once the sandbox finished (terminated, timed out, or its entrypoint exited). */
  get finished(): boolean {
    return this.result !== undefined;
  }

  private dockerResources(): { nanoCpus: number | undefined; memoryBytes: number | undefined } {
    return dockerResourcesOf(this.definition);
  }

  /** Watches PID 1 (its exit ends the sandbox) and installs the firewall rules of the sandbox's network policy. */
  private async claimContainer(): Promise<void> {
    void this.container.wait().then(
      (outcome: { StatusCode?: number }) => {
        if (!this.finished)
          void this.end({ status: outcome.StatusCode === 0 ? RESULT_STATUS.SUCCESS : RESULT_STATUS.FAILURE, exitcode: outcome.StatusCode ?? 0 });
      },
      () => undefined,
    );
    if (this.network.mode === "network" && this.network.needsFirewall) {
      if (!this.containerAddress) throw new Error("the container has no IP address to firewall");
      this.firewallRules = await installFirewallRules(this.containerAddress, this.network, `sbx-modal-emulator:${this.id}`);
    }
  }

  private armTimers(): void {
    const untilDeadline = Math.max(0, this.deadlineMs - Date.now());
    this.lifetimeTimer = setTimeout(() => void this.end({ status: RESULT_STATUS.TIMEOUT, exception: "Sandbox timed out" }), untilDeadline);
    this.lifetimeTimer.unref();
    const idleSeconds = this.definition.idleTimeoutSeconds;
    if (idleSeconds && idleSeconds > 0) {
      this.idleTimer = setInterval(() => {
        const busy = [...this.execs.values()].some((exec) => exec.status === undefined);
        if (busy) this.lastActivity = Date.now();
        else if (Date.now() - this.lastActivity >= idleSeconds * 1000)
          void this.end({ status: RESULT_STATUS.TIMEOUT, exception: "Sandbox idle timeout" });
      }, 250);
      this.idleTimer.unref();
    }
  }

  /** Records activity (resets the idle timeout). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Starts an exec; a retried `TaskExecStart` with the same exec id returns the first one. */
  async startExec(request: ExecRequest): Promise<EmulatedExec> {
    const existing = this.execs.get(request.execId);
    if (existing) {
      await existing.start();
      return existing;
    }
    const environment = { ...this.definition.environment, ...request.environment };
    const exec = new EmulatedExec(this.container, { ...request, environment, workdir: request.workdir ?? this.definition.workdir }, () =>
      this.touch(),
    );
    this.execs.set(request.execId, exec);
    try {
      await exec.start();
    } catch (error) {
      this.execs.delete(request.execId);
      throw error;
    }
    this.touch();
    return exec;
  }

  /** Long-polls for the result for up to `timeoutSeconds` (0 answers at once). */
  async waitForResult(timeoutSeconds: number, signal: AbortSignal): Promise<GenericResultMessage | undefined> {
    if (this.result || timeoutSeconds <= 0) return this.result;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutSeconds * 1000);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      const wrapped = () => {
        signal.removeEventListener("abort", wrapped);
        this.resultWaiters.delete(wrapped);
        done();
      };
      this.resultWaiters.add(wrapped);
      signal.addEventListener("abort", wrapped, { once: true });
    });
    return this.result;
  }

  /** Ends the sandbox with `result` (the first result wins): removes the container and firewall rules. Idempotent. */
  end(result: GenericResultMessage): Promise<void> {
    if (!this.result) this.result = result;
    for (const waiter of [...this.resultWaiters]) waiter();
    if (!this.ending) {
      this.ending = (async () => {
        if (this.lifetimeTimer) clearTimeout(this.lifetimeTimer);
        if (this.idleTimer) clearInterval(this.idleTimer);
        this.options.onGone(this);
        for (const exec of this.execs.values()) exec.sandboxEnded = true;
        await this.container.remove({ force: true }).catch(() => undefined);
        await removeFirewallRules(this.firewallRules);
      })();
    }
    return this.ending;
  }

  /** What was asked for and what is enforced. */
  report(): SandboxEnforcementReport {
    const { environment, ...definition } = this.definition;
    return {
      sandboxId: this.id,
      containerId: this.containerId,
      containerAddress: this.containerAddress,
      definition: { ...definition, environmentNames: Object.keys(environment) },
      network: this.network,
      firewallRules: this.firewallRules.map(describeFirewallRule),
      dockerResources: this.dockerResources(),
      result: this.result,
    };
  }
}
