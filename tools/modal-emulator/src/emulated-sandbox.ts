/**
 * One emulated Modal Sandbox: a Docker container plus the state Modal's control plane and task command router keep
 * for it (execs, tags, result, lifetime). The emulator's own timer ends the sandbox at its deadline, recording the
 * result before the container goes, as Modal does (a command killed by the sandbox's end then meets a finished
 * sandbox when the client asks). The container's PID 1 sleeps until a backstop a few seconds past that deadline
 * (written into the container), so a leaked container still ends if the emulator dies, and never before the timer.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type Docker from "dockerode";
import { EmulatedExec, PID_FOLDER, type ExecRequest } from "./emulated-exec.js";
import { FS_TOOLS_PATH, FS_TOOLS_SOURCE } from "./fs-tools-script.js";
import {
  describeFirewallRule,
  installFirewallRules,
  planNetwork,
  removeFirewallRules,
  type EmulatorNetworkPlan,
  type FirewallRule,
  type NetworkAccessMessage,
} from "./network-policy.js";
import { createTarArchive } from "./tar-archive.js";

/** Label put on every container the emulator creates. */
export const EMULATOR_LABEL = "sbx.modal-emulator";
/** Label holding the id of the emulator instance that owns the container. */
export const EMULATOR_INSTANCE_LABEL = "sbx.modal-emulator.instance";

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
}

function v1SandboxId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return `sb-${[...randomBytes(22)].map((byte) => alphabet[byte % alphabet.length]).join("")}`;
}

const DEADLINE_FILE = "/__modal/deadline";
/**
 * Seconds the container's own backstop waits past the sandbox deadline. Were it the deadline itself, the container
 * could stop (and its execs die) before the emulator's timer recorded the sandbox as timed out: a client asking then
 * would see a running sandbox and a command killed by SIGKILL, which Modal never reports.
 */
const BACKSTOP_SLACK_SECONDS = 5;

/** An emulated sandbox backed by a container. */
export class EmulatedSandbox {
  readonly id: string;
  readonly taskId = `ta-emu-${randomUUID()}`;
  readonly createdAt = Date.now() / 1000;
  readonly execs = new Map<string, EmulatedExec>();
  readonly network: EmulatorNetworkPlan;
  container!: Docker.Container;
  containerId = "";
  containerAddress: string | null = null;
  firewallRules: FirewallRule[] = [];
  result: GenericResultMessage | undefined;
  private lastActivity = Date.now();
  private lifetimeTimer: NodeJS.Timeout | undefined;
  /** When the sandbox's lifetime ends (epoch milliseconds), fixed when its container is created. */
  private deadlineMs = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private ending: Promise<void> | undefined;
  private readonly resultWaiters = new Set<() => void>();

  private constructor(readonly options: EmulatedSandboxOptions) {
    // V2 ids must not look like V1 ids, or the SDK switches to the V1 RPCs for fromId, wait and terminate.
    this.id = options.v1Id ? v1SandboxId() : `sb-emu-${randomUUID()}`;
    this.network = planNetwork(options.definition.networkAccess);
  }

  /** Creates and starts the container, installs the fs tool and firewall rules. */
  static async start(options: EmulatedSandboxOptions): Promise<EmulatedSandbox> {
    const sandbox = new EmulatedSandbox(options);
    try {
      await sandbox.createContainer();
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
    const resources = this.definition.resources;
    const milliCpu = resources?.milliCpuMax || resources?.milliCpu || undefined;
    const memoryMb = resources?.memoryMbMax || resources?.memoryMb || undefined;
    return { nanoCpus: milliCpu ? milliCpu * 1_000_000 : undefined, memoryBytes: memoryMb ? memoryMb * 1024 * 1024 : undefined };
  }

  private async createContainer(): Promise<void> {
    const { docker, definition } = this.options;
    this.deadlineMs = Date.now() + definition.timeoutSeconds * 1000;
    const deadline = Math.ceil(this.deadlineMs / 1000) + BACKSTOP_SLACK_SECONDS;
    const lifetimeScript = `echo "$1" > ${DEADLINE_FILE}; while [ "$(date +%s)" -lt "$(cat ${DEADLINE_FILE} 2>/dev/null || echo 0)" ]; do sleep 1; done`;
    const command =
      definition.entrypointArgs.length > 0
        ? definition.entrypointArgs
        : ["/bin/sh", "-c", lifetimeScript, "modal-emulator-lifetime", String(deadline)];
    const { nanoCpus, memoryBytes } = this.dockerResources();
    this.container = await docker.createContainer({
      Image: this.options.image,
      name: `modal-emulator-${this.id.slice(-36)}`,
      Entrypoint: [],
      Cmd: command,
      WorkingDir: definition.workdir,
      Env: Object.entries(definition.environment).map(([key, value]) => `${key}=${value}`),
      Labels: { [EMULATOR_LABEL]: "1", [EMULATOR_INSTANCE_LABEL]: this.options.instanceId, "sbx.modal-emulator.sandbox": this.id },
      HostConfig: {
        Init: true,
        NetworkMode: this.network.mode === "none" ? "none" : this.options.networkName,
        ...(nanoCpus ? { NanoCpus: nanoCpus } : {}),
        ...(memoryBytes ? { Memory: memoryBytes, MemorySwap: memoryBytes } : {}),
      },
    });
    this.containerId = this.container.id;
    await this.container.putArchive(
      createTarArchive([
        { path: "__modal", mode: 0o755 },
        { path: "__modal/.bin", mode: 0o755 },
        { path: PID_FOLDER.slice(1), mode: 0o1733 },
        { path: FS_TOOLS_PATH.slice(1), mode: 0o755, content: Buffer.from(FS_TOOLS_SOURCE, "utf8") },
      ]),
      { path: "/" },
    );
    await this.container.start();
    void this.container.wait().then(
      (outcome: { StatusCode?: number }) => {
        if (!this.finished)
          void this.end({ status: outcome.StatusCode === 0 ? RESULT_STATUS.SUCCESS : RESULT_STATUS.FAILURE, exitcode: outcome.StatusCode ?? 0 });
      },
      () => undefined,
    );
    if (this.network.mode === "network") {
      const information = await this.container.inspect();
      this.containerAddress = information.NetworkSettings.Networks[this.options.networkName]?.IPAddress || null;
      if (this.network.needsFirewall) {
        if (!this.containerAddress) throw new Error("the container has no IP address to firewall");
        this.firewallRules = await installFirewallRules(this.containerAddress, this.network, `sbx-modal-emulator:${this.id}`);
      }
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
        if (this.container) await this.container.remove({ force: true }).catch(() => undefined);
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
