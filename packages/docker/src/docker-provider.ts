import { randomUUID } from "node:crypto";
import {
  InvalidArgumentError,
  ProviderError,
  RuntimeMissingError,
  SandboxNotFoundError,
  SbxError,
  type BackendStatus,
  type SandboxProviderV1,
} from "@sbx/core";
import {
  defineCapabilities,
  type DriverAudit,
  type ProviderCreateRequest,
  type ResolvedCreateOptions,
  type SandboxDriverV1,
} from "@sbx/core/adapter";
import {
  createOutOfMemoryProbe,
  newCommandTag,
  OUT_OF_MEMORY_PROBE_SCRIPT,
  parseOutOfMemoryKills,
  throwIfAborted,
  withCodeAgent,
} from "@sbx/core/adapter";
import type Docker from "dockerode";
import { buildContainerConfig, requestedPolicy, type RequestedPolicy } from "./container-config.js";
import {
  ALTERNATIVE_BACKENDS,
  createDockerClient,
  engineMessage,
  engineRemedy,
  engineUnavailable,
  isConnectionError,
  statusCodeOf,
} from "./docker-client.js";
import { runArgv, spawnCommand, type LiveExec } from "./exec-process.js";
import { AGENT_PROCESS_KILL_SCRIPT, spawnAgentProcess } from "./agent-launch.js";
import { ENFORCEMENT_USER, killTaggedTree } from "./kill-process-tree.js";
import { createKillBatcher } from "./kill-batch.js";
import { containerRunning, isContainerGoneError, sandboxLost, scrubHostPaths } from "./sandbox-lost.js";
import { holdDeadManSwitch } from "./dead-man-switch.js";
import { pullImage } from "./image-pull.js";
import { compileAllowlist } from "./egress/allowlist.js";
import { startSandboxEgress, type SandboxEgress } from "./egress/sandbox-egress.js";
import { SANDBOX_SOCKET_DIRECTORY } from "./egress/egress-socket.js";
import { planEgressTransport, type EgressTransportPlan } from "./egress/egress-transport.js";
import { EXPIRES_AT_LABEL, MANAGED_LABEL, POLICY_LABEL } from "./labels.js";
import { auditFromInspect, findMismatches, policyNotEnforced } from "./policy-readback.js";
import { sandboxFiles } from "./sandbox-files.js";
import {
  describeEndpoint,
  dockerSettingsSchema,
  parseDockerSettings,
  resolveEndpoint,
  type AgentCommandsMode,
  type DockerSettings,
  type EngineEndpoint,
  type ResolvedDockerSettings,
} from "./settings.js";

/** The Docker backend's capability manifest (must equal the copy in core's backend registry). */
export const DOCKER_CAPABILITIES = defineCapabilities({
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  EGRESS_ALLOWLIST: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  HOST_MOUNTS: true,
  RECONNECT: true,
  RESOURCE_LIMITS: true,
  languages: ["python"],
});

/** One id per host process: every sandbox this process creates carries it as `sbx.session`. */
export const PROCESS_SESSION = randomUUID();

/** What the engine says about itself. */
interface EngineInfo {
  readonly version: string;
  readonly apiVersion: string;
  readonly securityOptions: readonly string[];
  readonly runtimes: readonly string[];
}

const engineInfoCache = new Map<string, Promise<EngineInfo>>();

function engineInfoOf(docker: Docker, endpoint: EngineEndpoint): Promise<EngineInfo> {
  const key = describeEndpoint(endpoint);
  let cached = engineInfoCache.get(key);
  if (!cached) {
    cached = Promise.all([docker.version(), docker.info()]).then(([version, info]) => ({
      version: version.Version,
      apiVersion: version.ApiVersion,
      securityOptions: (info.SecurityOptions ?? []) as string[],
      runtimes: Object.keys(info.Runtimes ?? {}),
    }));
    cached.catch(() => engineInfoCache.delete(key));
    engineInfoCache.set(key, cached);
  }
  return cached;
}

function withTimeout<Value>(promise: Promise<Value>, milliseconds: number, message: string): Promise<Value> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(Object.assign(new Error(message), { code: "ETIMEDOUT" })), milliseconds))),
  ]).finally(() => clearTimeout(timer));
}

/** POST /containers/create through the modem, to keep the engine's `Warnings` (dockerode drops them). */
function createContainerRaw(
  docker: Docker,
  config: Docker.ContainerCreateOptions,
  signal?: AbortSignal,
): Promise<{ Id: string; Warnings: string[] | null }> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      {
        path: "/containers/create?",
        method: "POST",
        options: config,
        abortSignal: signal,
        statusCodes: { 200: true, 201: true, 400: "bad parameter", 404: "no such image", 409: "conflict", 500: "server error" },
      } as never,
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the engine's error, passed on unchanged to be mapped
      (error: unknown, data: unknown) => (error ? reject(error) : resolve(data as { Id: string; Warnings: string[] | null })),
    );
  });
}

/** Runs core's OOM probe (the cgroup's `oom_kill` counter) as root, which sandboxed code cannot interfere with. */
async function readOutOfMemoryCounters(container: Docker.Container): Promise<string> {
  return (await runArgv(container, ["sh", "-c", OUT_OF_MEMORY_PROBE_SCRIPT], { user: ENFORCEMENT_USER, maxOutputBytes: 4096 })).stdout.toString(
    "utf8",
  );
}

function removeQuietly(container: Docker.Container): Promise<void> {
  return container.remove({ force: true, v: true }).then(
    () => undefined,
    (error: unknown) => {
      const status = statusCodeOf(error);
      if (status === 404 || status === 409) return;
      throw error;
    },
  );
}

/** How long the root kill helper may take before the sandbox is ended instead (it is fork-free and usually takes milliseconds). */
const KILL_VERIFY_TIMEOUT_MS = 10_000;

/** Builds the driver for one running, verified container. */
function createDriver(
  docker: Docker,
  id: string,
  policy: RequestedPolicy,
  audit: DriverAudit,
  oomBaseline: number | null,
  deadManSwitch?: { release(): void },
  egress?: SandboxEgress,
  agentCommands: AgentCommandsMode = "warm",
): SandboxDriverV1 {
  const container = docker.getContainer(id);
  const files = sandboxFiles(container, policy.user, policy.workspace);
  const outOfMemory = createOutOfMemoryProbe(() => readOutOfMemoryCounters(container), oomBaseline);
  let destroyed: Promise<void> | undefined;
  let lost: SandboxNotFoundError | undefined;
  const markLost = (detail: string, cause?: unknown): SandboxNotFoundError => {
    lost ??= sandboxLost(id, detail, cause);
    return lost;
  };
  // Host-side enforcement of the lifetime while this process lives (the in-container deadline is the other half).
  // (Timers cap at 2^31-1 ms, about 24.8 days; a longer lifetime relies on the in-container deadline alone.)
  const expiresIn = Math.max(0, Date.parse(policy.expiresAt) - Date.now()) + 2000;
  const expiry =
    Number.isFinite(expiresIn) && expiresIn < 2 ** 31 - 1
      ? setTimeout(() => (egress?.close(), void removeQuietly(container).catch(() => {})), expiresIn)
      : undefined;
  expiry?.unref();

  /** The lost-sandbox error when `cause` (or the engine, asked now) says the container is gone; else undefined. */
  const lostError = async (cause?: unknown): Promise<Error | undefined> => {
    if (lost) return lost;
    if (cause !== undefined && isContainerGoneError(cause)) return markLost("the engine no longer has it running", cause);
    if (destroyed) return undefined;
    const running = await containerRunning(container);
    return running === false ? markLost("its container ended (removed out of band, or its lifetime ran out)", cause) : undefined;
  };

  /** Runs one operation; a container that vanished underneath it becomes `SandboxNotFoundError`. */
  const guard = async <Result>(operation: () => Promise<Result>): Promise<Result> => {
    if (lost) throw lost;
    try {
      return await operation();
    } catch (error) {
      if (SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND") throw error;
      if (isContainerGoneError(error)) throw markLost("the engine no longer has it running", error);
      if (!SbxError.isInstance(error) || error.code === "SBX_PROVIDER" || error.code === "SBX_FILE_NOT_FOUND") {
        const gone = await lostError().catch(() => undefined);
        if (gone) throw gone;
      }
      if (SbxError.isInstance(error)) throw error;
      throw new ProviderError({ backend: "docker", cause: error, message: `The Docker Engine failed: ${scrubHostPaths(engineMessage(error))}` });
    }
  };

  const endSandbox = async (reason: string): Promise<never> => {
    // Bounded: a stalled engine must not hold kill() forever (the error then still says the sandbox is ended).
    await withTimeout(container.kill({ signal: "SIGKILL" }), KILL_VERIFY_TIMEOUT_MS, "the engine did not answer the container kill").catch(() => {});
    await withTimeout(removeQuietly(container), KILL_VERIFY_TIMEOUT_MS, "the engine did not answer the container removal").catch(() => {});
    throw markLost(`sbx ended it because ${reason}, so the command's processes could not be verified gone`);
  };

  /** The running agents (`pid:starttime`), which a command's kill leaves alive although they carry no tag (adr/0030). */
  const agentProcesses = new Set<string>();
  const killTags = async (tags: readonly string[], sweepUntagged: boolean): Promise<void> => {
    if (lost) throw lost;
    const outcome = await killTaggedTree(container, {
      tag: tags.join(" "),
      commandUid: policy.user.split(":")[0]!,
      timeoutMs: KILL_VERIFY_TIMEOUT_MS,
      exempt: [...agentProcesses],
      sweepUntagged,
    });
    if (outcome.verified) return;
    const gone = await lostError().catch(() => undefined);
    if (gone) throw gone;
    return endSandbox(outcome.reason);
  };
  /**
   * A command's verified kill: its tag. The sweep of untagged sandbox-user processes (adr/0030) is off: in the
   * integration CI run it made a fork bomb at the pids limit outlast the kill grace on the agent path.
   */
  const killVerified = createKillBatcher((tags) => killTags(tags, false));
  /** The agent's interpreters' kill: their tag only (the agent's own kill by pid follows; its commands keep theirs). */
  const killInterpreters = createKillBatcher((tags) => killTags(tags, false));

  const checkOutOfMemory = () => outOfMemory.changed();
  const killAgentProcess = async (pid: string, startTime: string): Promise<void> => {
    if (lost) throw lost;
    const killing = runArgv(container, ["sh", "-c", AGENT_PROCESS_KILL_SCRIPT, "sbx-kill-agent", pid, startTime], {
      user: ENFORCEMENT_USER,
      maxOutputBytes: 4096,
    });
    const outcome = await withTimeout(killing, KILL_VERIFY_TIMEOUT_MS, "the agent kill did not finish").then(
      (result) => (result.exitCode === 0 ? undefined : `the agent kill exited with ${result.exitCode}`),
      (error: unknown) => `the agent kill failed (${error instanceof Error ? error.message : String(error)})`,
    );
    if (outcome === undefined) return;
    const gone = await lostError().catch(() => undefined);
    if (gone) throw gone;
    return endSandbox(outcome);
  };
  /** Every command exec not yet settled: settled (exit 137) once the container is removed (adr/0030). */
  const liveExecs = new Set<LiveExec>();
  const execContext = { container, user: policy.user, checkOutOfMemory, killVerified, lostError, liveExecs };
  // runCode and code contexts go through the sbx sandbox agent (core), started lazily with one long-lived exec.
  // Commands go through it too while it runs (adr/0025), held to the same enforcement as the exec path: each carries
  // an audit tag the root kill helper finds, a SIGKILL exit is checked for the OOM killer, a gone container is lost.
  return withCodeAgent(
    {
      id,
      workspace: policy.workspace,
      audit,
      native: container,
      // An allowlisted sandbox: every command (and the code agent) gets the proxy variables; the caller's own win.
      spawn: (request) => guard(() => spawnCommand(execContext, egress ? { ...request, env: { ...egress.environment, ...request.env } } : request)),
      readFile: (path, options) => guard(() => files.readFile(path, options)),
      writeFile: (path, data, options) => guard(() => files.writeFile(path, data, options)),
      list: (path, options) => guard(() => files.list(path, options)),
      stat: (path, options) => guard(() => files.stat(path, options)),
      remove: (path, options) => guard(() => files.remove(path, options)),
      mkdir: (path, options) => guard(() => files.mkdir(path, options)),
      rename: (from, to, options) => guard(() => files.rename(from, to, options)),
      destroy() {
        clearTimeout(expiry);
        egress?.close();
        destroyed ??= removeQuietly(container)
          .then(() => {
            // The container and every process in it are gone: no command's exit may stay pending (nor keep polling).
            for (const live of [...liveExecs]) live.end();
          })
          .finally(() => deadManSwitch?.release());
        return destroyed;
      },
    },
    {
      backend: "docker",
      commands: agentCommands === "off" ? "driver" : "agent",
      commandsStartAgent: agentCommands === "start",
      enforcement: {
        spawnAgent: (request) =>
          guard(() =>
            spawnAgentProcess(
              { ...execContext, killVerified: killInterpreters, killProcess: killAgentProcess, endSandbox, agentProcesses },
              egress ? { ...request, env: { ...egress.environment, ...request.env } } : request,
            ),
          ),
        newTag: newCommandTag,
        killTagged: killVerified,
        outOfMemoryKilled: checkOutOfMemory,
        lostError,
        environment: egress?.environment,
      },
    },
  );
}

/** Starts the allowlist forwarder and proxy for a new container; a forwarder that cannot start fails the create. */
async function startAllowlist(
  container: Docker.Container,
  id: string,
  allow: readonly string[],
  settings: ResolvedDockerSettings,
  networkMode: string,
  notes: string[],
  transport: EgressTransportPlan,
): Promise<SandboxEgress> {
  try {
    return await startSandboxEgress(container, {
      allow,
      ports: settings.egressPorts,
      hosts: settings.egressHosts,
      resolve: settings.egressResolver,
      networkMode,
      onDenied: settings.onEgressDenied,
      sandboxId: id,
      notes,
      socket: transport.socket,
      socketUser: transport.socketUser,
      unavailableReason: transport.unavailableReason,
    });
  } catch (error) {
    if (SbxError.isInstance(error)) throw error;
    const message = (error as Error).message;
    if (/python3.*(not found|no such file)|executable file not found/i.test(message)) {
      throw new RuntimeMissingError({
        backend: "docker",
        runtime: "python3",
        message: `network.allow on Docker needs python3 in the image (the egress forwarder is a small Python program): ${scrubHostPaths(message)}. Use an image with python3, or egress "deny" without an allowlist.`,
      });
    }
    throw new ProviderError({ backend: "docker", cause: error, message: `The egress allowlist forwarder did not start: ${scrubHostPaths(message)}` });
  }
}

/** Maps an engine error at create time to a typed sbx error. */
function createError(error: unknown, endpoint: EngineEndpoint, policy: RequestedPolicy): Error {
  if (SbxError.isInstance(error)) return error;
  if (isConnectionError(error)) return engineUnavailable(endpoint, error);
  const message = engineMessage(error);
  if (/network .* not found/i.test(message)) {
    return new InvalidArgumentError({
      field: "settings.bridgeNetwork",
      backend: "docker",
      cause: error,
      message: `Invalid settings.bridgeNetwork: the Docker network ${JSON.stringify(policy.networkMode)} does not exist (${message}). Create it with \`docker network create ${policy.networkMode}\` or pass an existing one.`,
    });
  }
  if (/runtime/i.test(message) && policy.runtime) {
    return new InvalidArgumentError({
      field: "settings.runtime",
      backend: "docker",
      cause: error,
      message: `Invalid settings.runtime: the engine does not know runtime ${JSON.stringify(policy.runtime)} (${message}). Install it (gVisor: \`apt-get install runsc\`, then add it to /etc/docker/daemon.json "runtimes") and reload the engine.`,
    });
  }
  return new ProviderError({
    backend: "docker",
    cause: error,
    message: `The Docker Engine refused to create the sandbox from ${JSON.stringify(policy.image)}: ${message}`,
  });
}

/** Parses the requested policy recorded in a container's labels, for `connect`. */
function policyFromContainer(inspect: Docker.ContainerInspectInfo, settings: ResolvedDockerSettings): RequestedPolicy {
  const labels = inspect.Config.Labels ?? {};
  const recorded = JSON.parse(labels[POLICY_LABEL] ?? "{}") as Partial<{
    egress: "deny" | "allow";
    cpus: number;
    memoryMiB: number;
    pids: number;
    user: "default" | "root";
    commandUser: string;
    lifetimeSeconds: number;
    runtime: string | null;
    workspaceSizeMiB: number;
    tmpSizeMiB: number;
    endsWithHost: boolean;
  }>;
  return {
    image: inspect.Config.Image,
    egress: recorded.egress ?? "deny",
    networkMode: recorded.egress === "allow" ? (inspect.HostConfig.NetworkMode ?? settings.bridgeNetwork) : "none",
    cpus: recorded.cpus ?? settings.defaultLimits.cpus,
    memoryMiB: recorded.memoryMiB ?? settings.defaultLimits.memoryMiB,
    pids: recorded.pids ?? settings.defaultLimits.pids,
    user: recorded.commandUser ?? (recorded.user === "root" ? "0:0" : settings.user),
    userKind: recorded.user ?? "default",
    runtime: recorded.runtime ?? undefined,
    lifetimeSeconds: recorded.lifetimeSeconds ?? 0,
    expiresAt: labels[EXPIRES_AT_LABEL] ?? "",
    workspace: inspect.Config.WorkingDir || settings.workspace,
    workspaceSizeMiB: recorded.workspaceSizeMiB ?? settings.workspaceSizeMiB ?? 0,
    tmpSizeMiB: recorded.tmpSizeMiB ?? settings.tmpSizeMiB,
    endsWithHost: recorded.endsWithHost ?? false,
    mounts: inspect.Mounts.filter((mount) => mount.Type === "bind" && mount.Destination !== SANDBOX_SOCKET_DIRECTORY).map((mount) => ({
      hostPath: mount.Source,
      sandboxPath: mount.Destination,
      readOnly: !mount.RW,
    })),
  };
}

/**
 * Creates the Docker provider. Settings (all optional, validated): `socketPath` or `host` (else `DOCKER_HOST`),
 * `image` (default `"python:3.12-slim"`; the target after `docker://` wins), `runtime` (for example `"runsc"`),
 * `bridgeNetwork` for egress-allowed sandboxes (default `"bridge"`), `onPullProgress`, and more; see `DockerSettings`.
 */
export function createSandboxProvider(settings?: DockerSettings | Record<string, unknown>): SandboxProviderV1 {
  const resolved = parseDockerSettings(settings);
  const endpoint = resolveEndpoint(resolved);
  const docker = createDockerClient(endpoint);

  async function detect(options?: { signal?: AbortSignal }): Promise<BackendStatus> {
    try {
      throwIfAborted(options?.signal, "docker");
      const engine = await withTimeout(engineInfoOf(docker, endpoint), resolved.detectTimeoutMs, `no answer within ${resolved.detectTimeoutMs} ms`);
      if (resolved.runtime && !engine.runtimes.includes(resolved.runtime)) {
        return {
          backend: "docker",
          usable: false,
          isolating: true,
          reason: `The Docker Engine ${engine.version} at ${describeEndpoint(endpoint)} has no runtime ${JSON.stringify(resolved.runtime)} (it has ${engine.runtimes.join(", ")}).`,
          remedy: `Install the runtime (gVisor: \`apt-get install runsc\`), register it in /etc/docker/daemon.json "runtimes", reload the engine; or drop settings.runtime.`,
        };
      }
      return {
        backend: "docker",
        usable: true,
        isolating: true,
        reason: `Docker Engine ${engine.version} (API ${engine.apiVersion}) at ${describeEndpoint(endpoint)}`,
        remedy: "",
      };
    } catch (error) {
      if (SbxError.isInstance(error) && error.code === "SBX_ABORTED") throw error;
      const unavailable = engineUnavailable(endpoint, error);
      return {
        backend: "docker",
        usable: false,
        isolating: true,
        reason: unavailable.message,
        remedy: `${engineRemedy(endpoint)} Or use another backend: ${ALTERNATIVE_BACKENDS.join("; ")}.`,
      };
    }
  }

  async function create(request: ProviderCreateRequest): Promise<SandboxDriverV1> {
    const { options, signal } = request;
    throwIfAborted(signal, "docker");
    // Per-sandbox settings (options.settings) refine the provider's; the engine connection stays the provider's.
    const effective = Object.keys(options.settings).length > 0 ? parseDockerSettings({ ...(settings ?? {}), ...options.settings }) : resolved;
    const image = request.target || effective.image;
    const policy = requestedPolicy(image, options, effective);
    const allow = options.network.allow ?? [];
    // Invalid entries are refused before anything is created.
    if (allow.length > 0) compileAllowlist(allow, effective.egressPorts);
    const config = buildContainerConfig(policy, { session: PROCESS_SESSION, metadata: options.metadata });
    // The allowlist's transport (adr/0027): a host socket directory mounted read-only at create, else the exec stream.
    const egressTransport =
      allow.length > 0 ? await planEgressTransport({ endpoint, settings: effective, commandUser: policy.user, config }) : undefined;
    const createOnce = () =>
      egressTransport
        ? egressTransport.create(() => createContainerRaw(docker, config, signal), engineMessage)
        : createContainerRaw(docker, config, signal);
    const engine = engineInfoOf(docker, endpoint);
    engine.catch(() => {});
    let created: { Id: string; Warnings: string[] | null };
    try {
      try {
        created = await createOnce();
      } catch (error) {
        if (statusCodeOf(error) !== 404 || !/no such image/i.test(engineMessage(error)) || !effective.pull) throw error;
        await pullImage(docker, image, { onProgress: effective.onPullProgress, signal });
        created = await createOnce();
      }
    } catch (error) {
      egressTransport?.close();
      throw createError(error, endpoint, policy);
    }
    const container = docker.getContainer(created.Id);
    let deadManSwitch: { release(): void } | undefined;
    try {
      const warnings = (created.Warnings ?? []).filter((warning) => warning.trim().length > 0);
      if (warnings.length > 0) throw policyNotEnforced([], warnings);
      throwIfAborted(signal, "docker");
      // The dead-man's switch is attached before start, so the sandbox never runs without it.
      if (policy.endsWithHost) deadManSwitch = await holdDeadManSwitch(container, signal);
      // The read-back runs alongside start: HostConfig, Config and Mounts are fixed at create, so one inspect
      // verifies them without adding a round trip to the hot path.
      const [inspect, engineInfo] = await Promise.all([container.inspect(), engine, container.start()]);
      const mismatches = findMismatches(policy, inspect);
      if (mismatches.length > 0) throw policyNotEnforced(mismatches, []);
      const notes = [`engine security options: ${engineInfo.securityOptions.join(", ") || "none reported"}`];
      const audit = auditFromInspect(policy, inspect, engineInfo, notes);
      if (allow.length === 0) return createDriver(docker, created.Id, policy, audit, 0, deadManSwitch, undefined, effective.agentCommands);
      // The notes array is live: denials are appended as the proxy refuses requests (core copies it per audit()).
      const liveNotes = [...(audit.notes ?? [])];
      const egress = await startAllowlist(
        container,
        created.Id,
        allow,
        effective,
        inspect.HostConfig.NetworkMode ?? "none",
        liveNotes,
        egressTransport!,
      );
      const allowlistAudit: DriverAudit = { ...audit, policies: { ...audit.policies, network: egress.record }, notes: liveNotes };
      return createDriver(docker, created.Id, policy, allowlistAudit, 0, deadManSwitch, egress, effective.agentCommands);
    } catch (error) {
      await removeQuietly(container).catch(() => {});
      deadManSwitch?.release();
      egressTransport?.close();
      throw createError(error, endpoint, policy);
    }
  }

  async function connect(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<SandboxDriverV1> {
    throwIfAborted(request.signal, "docker");
    const container = docker.getContainer(request.sandboxId);
    let inspect: Docker.ContainerInspectInfo;
    try {
      inspect = await container.inspect();
    } catch (error) {
      if (isConnectionError(error)) throw engineUnavailable(endpoint, error);
      if (statusCodeOf(error) === 404)
        throw new SandboxNotFoundError({
          backend: "docker",
          sandboxId: request.sandboxId,
          message: `No Docker sandbox ${request.sandboxId}: it expired, was killed, or never existed.`,
        });
      throw error;
    }
    if (inspect.Config.Labels?.[MANAGED_LABEL] !== "1") {
      throw new SandboxNotFoundError({
        backend: "docker",
        sandboxId: request.sandboxId,
        message: `Container ${request.sandboxId} is not an sbx sandbox (it lacks the ${MANAGED_LABEL} label); refusing to attach.`,
      });
    }
    if (!inspect.State.Running)
      throw new SandboxNotFoundError({
        backend: "docker",
        sandboxId: request.sandboxId,
        message: `Docker sandbox ${request.sandboxId} is no longer running (${inspect.State.Status}).`,
      });
    const policy = policyFromContainer(inspect, resolved);
    const mismatches = findMismatches(policy, inspect);
    if (mismatches.length > 0) throw policyNotEnforced(mismatches, []);
    const engineInfo = await engineInfoOf(docker, endpoint);
    const baseline = parseOutOfMemoryKills(await readOutOfMemoryCounters(container).catch(() => ""));
    return createDriver(
      docker,
      inspect.Id,
      policy,
      auditFromInspect(policy, inspect, engineInfo, ["attached with connect(); policies read back from the running container"]),
      baseline,
      undefined,
      undefined,
      resolved.agentCommands,
    );
  }

  return {
    specificationVersion: "sbx-v1",
    backend: "docker",
    packageName: "@sbx/docker",
    capabilities: DOCKER_CAPABILITIES,
    isolating: true,
    settingsSchema: dockerSettingsSchema,
    detect,
    create,
    connect,
  };
}

/** Alias of `createSandboxProvider`: `createSandbox(docker({ runtime: "runsc" }))`. */
export const docker = createSandboxProvider;
