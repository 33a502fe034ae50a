import { ProviderError, type FileEntry, type SandboxSnapshot } from "@sbx/core";
import {
  newCommandTag,
  type DriverAgentEnforcement,
  type DriverAudit,
  type DriverCodeAgent,
  type PosixFileOperations,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
} from "@sbx/core/adapter";
import type Docker from "dockerode";
import { spawnAgentProcess } from "./agent-launch.js";
import { containerUserFor, type RequestedPolicy } from "./container-config.js";
import { replaceDeadline } from "./lifetime-change.js";
import { removeQuietly } from "./container-removal.js";
import type { SandboxEgress } from "./egress/sandbox-egress.js";
import { spawnCommand, type ExecContext, type LiveExec } from "./exec-process.js";
import { fileHelperOperations } from "./file-helper.js";
import { KillEscalation } from "./kill-escalation.js";
import { startLifetimeTimer, type LifetimeTimer } from "./lifetime-timer.js";
import type { AgentCommandsMode } from "./docker-settings.js";
import { createOutOfMemoryCheck } from "./out-of-memory-check.js";
import { pauseSandbox, resumeSandbox } from "./pause-sandbox.js";
import { SandboxLoss, type SandboxProbeAnswer } from "./sandbox-lost.js";
import { forgetAgentProcesses } from "./untagged-process-check.js";
import { takeSnapshot } from "./take-snapshot.js";

/** What a `DockerDriver` is built from: one running container whose policy was read back, and what the provider set up around it. */
export interface DockerDriverOptions {
  /** The sandbox's container (running, its policy verified). */
  readonly container: Docker.Container;
  /** The policy it was created with (or, after `connect`, read back from its labels). */
  readonly policy: RequestedPolicy;
  /** The audit record. */
  readonly audit: DriverAudit;
  /** The sandbox's OOM kill count when the driver was built: 0 for a new sandbox, the count read at `connect`, null if unknown. */
  readonly outOfMemoryBaseline: number | null;
  /** The dead-man's switch this process holds (the sandbox ends with it), released at `destroy`. Default none (`connect`). */
  readonly deadManSwitch?: { release(): void };
  /** The allowlist proxy of an allowlisted sandbox: its variables go beneath every command's; closed at `destroy`. Default none. */
  readonly egress?: SandboxEgress;
  /** When commands go through the sbx sandbox agent (`settings.agentCommands`, adr/0025). Default `"warm"`. */
  readonly agentCommands?: AgentCommandsMode;
  /** The engine client, for snapshots (`snapshot`, ADR 0056). Default none: `snapshot` then refuses with `ProviderError`. */
  readonly docker?: Docker;
}

/**
 * One Docker sandbox as a driver: commands as execs (tagged, with verified kills that end the sandbox when they cannot
 * be verified), files through core's file helper run as the sandbox's uid, a host-side lifetime timer, and the
 * lost-sandbox rule (a container removed behind sbx's back is `SandboxNotFoundError` from every operation).
 * It declares `codeAgent` (core attaches the sbx sandbox agent: code runs, and commands while it runs, held to the same
 * enforcement as the exec path) and `baseEnvironment` (core merges the egress proxy's variables once, ADR 0044).
 */
export class DockerDriver implements SandboxDriverV1 {
  /** The container id. */
  readonly id: string;
  /** The workspace path inside the container. */
  readonly workspace: string;
  /** What was applied and how it is enforced. */
  readonly audit: DriverAudit;
  /** The dockerode container, for `dockerContainer()`. */
  readonly native: Docker.Container;
  /** Variables every process gets beneath the caller's: the egress proxy's on an allowlisted sandbox, else none. */
  readonly baseEnvironment: Readonly<Record<string, string>> | undefined;
  /** The sbx sandbox agent, which core attaches (ADR 0037): commands through it as `settings.agentCommands` says. */
  readonly codeAgent: DriverCodeAgent;

  private readonly options: DockerDriverOptions;
  private readonly loss: SandboxLoss;
  private readonly kills: KillEscalation;
  private readonly files: PosixFileOperations;
  private lifetime: LifetimeTimer;
  /** Every command exec not yet settled: settled (exit 137) once the container is removed (adr/0030). */
  private readonly liveExecs = new Set<LiveExec>();
  private readonly execContext: ExecContext;
  private destroyed: Promise<void> | undefined;

  constructor(options: DockerDriverOptions) {
    const { container, policy } = options;
    this.options = options;
    this.id = container.id;
    this.workspace = policy.workspace;
    this.audit = options.audit;
    this.native = container;
    this.baseEnvironment = options.egress?.environment;
    this.loss = new SandboxLoss({ container, isDestroyed: () => this.destroyed !== undefined });
    this.kills = new KillEscalation({ container, commandUser: policy.user, loss: this.loss });
    this.files = fileHelperOperations(container, { user: policy.user, workspace: policy.workspace });
    this.lifetime = startLifetimeTimer({ expiresAt: policy.expiresAt, onExpiry: () => this.expire() });
    this.execContext = {
      container,
      user: policy.user,
      checkOutOfMemory: createOutOfMemoryCheck(container, options.outOfMemoryBaseline),
      killVerified: this.kills.killVerified,
      lostError: (cause) => this.loss.lostError(cause),
      liveExecs: this.liveExecs,
    };
    const agentCommands = options.agentCommands ?? "warm";
    this.codeAgent = {
      commands: agentCommands === "off" ? "driver" : "agent",
      commandsStartAgent: agentCommands === "start",
      enforcement: this.agentEnforcement(),
    };
  }

  /** Starts one command as its own exec (core has put the egress proxy's variables beneath the caller's in its `env`). */
  spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    return this.guard(() => spawnCommand(this.execContext, request));
  }

  /** Starts the sbx sandbox agent's exec (agent-launch.ts): killed by its interpreters' tag, then by pid as root. */
  spawnAgent(request: SpawnRequest): Promise<SpawnedProcess> {
    const context = {
      ...this.execContext,
      killVerified: this.kills.killInterpreters,
      killProcess: this.kills.killAgentProcess,
      endSandbox: this.kills.endSandbox,
      agentProcesses: this.kills.agentProcesses,
    };
    return this.guard(() => spawnAgentProcess(context, request));
  }

  /** Streams a regular file's bytes. */
  readFile(path: string, options: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>> {
    return this.guard(() => this.files.readFile(path, options));
  }

  /** Writes a file from a stream (a temporary name renamed over the target). */
  writeFile(path: string, data: ReadableStream<Uint8Array>, options: { signal?: AbortSignal; sizeBytes?: number }): Promise<void> {
    return this.guard(() => this.files.writeFile(path, data, options));
  }

  /** Lists one directory level. */
  list(path: string, options: { signal?: AbortSignal }): Promise<FileEntry[]> {
    return this.guard(() => this.files.list(path, options));
  }

  /** Describes an entry, not following a final symlink. */
  stat(path: string, options: { signal?: AbortSignal }): Promise<FileEntry> {
    return this.guard(() => this.files.stat(path, options));
  }

  /** Removes a file or link, or a directory when `recursive`. */
  remove(path: string, options: { recursive: boolean; signal?: AbortSignal }): Promise<void> {
    return this.guard(() => this.files.remove(path, options));
  }

  /** Creates a directory and its parents. */
  mkdir(path: string, options: { signal?: AbortSignal }): Promise<void> {
    return this.guard(() => this.files.mkdir(path, options));
  }

  /** Renames (a final symlink at `to` is replaced, never followed). */
  rename(from: string, to: string, options: { signal?: AbortSignal }): Promise<void> {
    return this.guard(() => this.files.rename(from, to, options));
  }

  /**
   * Whether the sandbox still runs, from one bounded container inspect: `"gone"` for a removed or stopped container,
   * `"unknown"` when the engine did not answer. Core asks it once after an ambiguous failure (issue 20).
   */
  probe(options: { signal?: AbortSignal } = {}): Promise<SandboxProbeAnswer> {
    return this.loss.probe(options);
  }

  /** Moves the sandbox's end (ADR 0050): the in-container deadline replaced from outside, then the host-side timer. */
  setLifetime(request: { expiresAt: string }): Promise<{ expiresAt: string }> {
    return this.guard(async () => {
      const expiresAt = await replaceDeadline(this.native, { deadlineUser: containerUserFor(this.options.policy), expiresAt: request.expiresAt });
      this.lifetime.stop();
      this.lifetime = startLifetimeTimer({ expiresAt, onExpiry: () => this.expire() });
      return { expiresAt };
    });
  }

  /**
   * Pauses the sandbox (ADR 0055): every process of the sandbox user stopped and verified stopped from the deadline's
   * uid; the root deadline and the dead-man's switch are other uids and run on, so a paused sandbox still ends at its
   * deadline and with its host. A pause that cannot be verified is undone (everything continued) and rejects.
   */
  pause(request: { signal?: AbortSignal }): Promise<{ enforcement: string }> {
    return this.guard(() => pauseSandbox(this.pauseTarget(), request.signal));
  }

  /** Resumes a paused sandbox: every process of the sandbox user continued. */
  resume(): Promise<void> {
    return this.guard(() => resumeSandbox(this.pauseTarget()));
  }

  private pauseTarget() {
    return { container: this.native, commandUser: this.options.policy.user, deadlineUser: containerUserFor(this.options.policy) };
  }

  /**
   * Takes a filesystem snapshot (ADR 0056, `take-snapshot.ts`): the workspace archived from inside as the sandbox user
   * and committed onto the base image through a build container with a clean config; never this container's config.
   */
  snapshot(request: { signal?: AbortSignal }): Promise<SandboxSnapshot> {
    const { docker } = this.options;
    if (!docker)
      return Promise.reject(
        new ProviderError({ backend: "docker", message: "This Docker driver was built without its engine client; it cannot take a snapshot." }),
      );
    const { policy } = this.options;
    return this.guard(() =>
      takeSnapshot({
        docker,
        container: this.native,
        user: policy.user,
        workspace: policy.workspace,
        workspaceSizeMiB: policy.workspaceSizeMiB,
        signal: request.signal,
      }),
    );
  }

  /** The host-side half of the lifetime ending: the allowlist proxy closed and the container removed. */
  private expire(): void {
    this.options.egress?.close();
    void removeQuietly(this.native).catch(() => {});
  }

  /** Removes the container (idempotent); every command still waiting for its exit then settles with 137. */
  destroy(): Promise<void> {
    this.lifetime.stop();
    this.options.egress?.close();
    this.destroyed ??= removeQuietly(this.native)
      .then(() => {
        // The container and every process in it are gone: no command's exit may stay pending (nor keep polling).
        for (const live of [...this.liveExecs]) live.end();
        // Nor may its agents' entries outlive it in the process-wide map.
        forgetAgentProcesses(this.id);
      })
      .finally(() => this.options.deadManSwitch?.release());
    return this.destroyed;
  }

  /** Runs one operation; a container that vanished underneath it becomes `SandboxNotFoundError`. */
  private async guard<Result>(operation: () => Promise<Result>): Promise<Result> {
    if (this.loss.error) throw this.loss.error;
    try {
      return await operation();
    } catch (error) {
      throw await this.loss.failure(error);
    }
  }

  /**
   * What commands through the sandbox agent are held to (adr/0025): the agent's own exec, the verified tag kill, the
   * OOM report and the lost-sandbox rule, exactly as on the exec path.
   */
  private agentEnforcement(): DriverAgentEnforcement {
    return {
      spawnAgent: (request) => this.spawnAgent(request),
      newTag: newCommandTag,
      killTagged: this.kills.killVerified,
      outOfMemoryKilled: this.execContext.checkOutOfMemory,
      lostError: this.execContext.lostError,
    };
  }
}
