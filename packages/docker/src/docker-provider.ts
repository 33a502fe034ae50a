import { randomUUID } from "node:crypto";
import { SbxError, SandboxNotFoundError, type BackendStatus, type SandboxProviderV1 } from "@sbx/core";
import { throwIfAborted, withinTime, type DriverAudit, type ProviderCreateRequest, type ResolvedCreateOptions } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { timeoutError } from "./timeout-error.js";
import { buildContainerConfig, requestedPolicy, type RequestedPolicy } from "./container-config.js";
import { removeQuietly } from "./container-removal.js";
import { createContainerRaw, type CreatedContainer } from "./create-container.js";
import { holdDeadManSwitch } from "./dead-man-switch.js";
import { DOCKER_CAPABILITIES } from "./docker-capabilities.js";
import { createDockerClient } from "./docker-client.js";
import { DockerDriver, type DockerDriverOptions } from "./docker-driver.js";
import {
  describeEndpoint,
  dockerSettingsSchema,
  parseDockerSettings,
  refineDockerSettings,
  resolveEndpoint,
  type DockerSettings,
  type ResolvedDockerSettings,
} from "./docker-settings.js";
import { compileAllowlist } from "./egress/allowlist.js";
import { planEgressTransport, type EgressTransportPlan } from "./egress/egress-transport.js";
import { startSandboxEgress, type SandboxEgress } from "./egress/sandbox-egress.js";
import { engineInfoOf } from "./engine-info.js";
import { pullImage } from "./image-pull.js";
import { MANAGED_LABEL } from "./labels.js";
import {
  ALTERNATIVE_BACKENDS,
  engineMessage,
  engineRemedy,
  engineUnavailable,
  isConnectionError,
  mapCreateError,
  mapEgressStartError,
  noSuchSandbox,
  statusCodeOf,
} from "./map-docker-error.js";
import { outOfMemoryBaseline } from "./out-of-memory-check.js";
import { auditFromInspect, findMismatches, policyFromContainer, policyNotEnforced } from "./policy-readback.js";
import { getOrCreateNamed, listLabelledSandboxes, namedContainerConfig } from "./sandbox-directory.js";
import { restoreSnapshotWorkspace } from "./restore-snapshot.js";
import { snapshotForCreate, withSnapshotRecord } from "./snapshot-create.js";
import { deleteDockerSnapshot, listDockerSnapshots } from "./snapshot-store.js";

/** One id per host process: every sandbox this process creates carries it as `sbx.session`. */
export const PROCESS_SESSION = randomUUID();

/** Starts the allowlist forwarder and proxy for a new container; a forwarder that cannot start fails the create. */
async function startAllowlist(options: {
  readonly container: Docker.Container;
  readonly allow: readonly string[];
  readonly settings: ResolvedDockerSettings;
  readonly networkMode: string;
  readonly notes: string[];
  readonly transport: EgressTransportPlan;
}): Promise<SandboxEgress> {
  const { settings, transport } = options;
  try {
    return await startSandboxEgress(options.container, {
      allow: options.allow,
      ports: settings.egressPorts,
      hosts: settings.egressHosts,
      resolve: settings.egressResolver,
      networkMode: options.networkMode,
      onDenied: settings.onEgressDenied,
      sandboxId: options.container.id,
      notes: options.notes,
      socket: transport.socket,
      socketUser: transport.socketUser,
      unavailableReason: transport.unavailableReason,
    });
  } catch (error) {
    throw mapEgressStartError(error);
  }
}

/**
 * Creates the Docker provider. Settings (all optional, validated once here): `socketPath` or `host` (else
 * `DOCKER_HOST`), `image` (default `"python:3.12-slim"`; the target after `docker://` wins), `runtime` (for example
 * `"runsc"`), `bridgeNetwork` for egress-allowed sandboxes (default `"bridge"`), `onPullProgress`, and more; see
 * `DockerSettings`. A sandbox's own `options.settings` refine them; only the values that differ are parsed again.
 */
export function createSandboxProvider(settings?: DockerSettings | Record<string, unknown>): SandboxProviderV1 {
  const given: Readonly<Record<string, unknown>> = settings ?? {};
  const resolved = parseDockerSettings(given);
  const endpoint = resolveEndpoint(resolved);
  const docker = createDockerClient(endpoint);

  async function detect(options?: { signal?: AbortSignal }): Promise<BackendStatus> {
    try {
      throwIfAborted(options?.signal, "docker");
      const engine = await withinTime(engineInfoOf(docker, endpoint), resolved.detectTimeoutMs, () =>
        timeoutError(`no answer within ${resolved.detectTimeoutMs} ms`),
      );
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

  async function create(request: ProviderCreateRequest & { name?: string }): Promise<DockerDriver> {
    const { options, signal } = request;
    throwIfAborted(signal, "docker");
    // Per-sandbox settings (options.settings) refine the provider's; the engine connection stays the provider's.
    const effective = refineDockerSettings({ given, resolved }, options.settings);
    // A create from a snapshot (ADR 0056): its image is the snapshot's, checked before anything is created, never pulled.
    const snapshot =
      options.fromSnapshot === undefined ? undefined : await snapshotForCreate(docker, options.fromSnapshot, request.target, effective);
    const image = snapshot?.id ?? (request.target || effective.image);
    const policy = requestedPolicy(image, options, effective);
    const allow = options.network.allow ?? [];
    // Invalid entries are refused before anything is created.
    if (allow.length > 0) compileAllowlist(allow, effective.egressPorts);
    const unnamedConfig = buildContainerConfig(policy, { session: PROCESS_SESSION, metadata: options.metadata });
    // A named sandbox (getOrCreateSandbox): the engine's unique container names make exactly one creator (ADR 0050).
    const config = request.name === undefined ? unnamedConfig : namedContainerConfig(request.name, unnamedConfig);
    // The allowlist's transport (adr/0027): a host socket directory mounted read-only at create, else the exec stream.
    const egressTransport =
      allow.length > 0 ? await planEgressTransport({ endpoint, settings: effective, commandUser: policy.user, config }) : undefined;
    const createOnce = () =>
      egressTransport
        ? egressTransport.create(() => createContainerRaw(docker, config, signal), engineMessage)
        : createContainerRaw(docker, config, signal);
    const engine = engineInfoOf(docker, endpoint);
    engine.catch(() => {});
    let created: CreatedContainer;
    try {
      try {
        created = await createOnce();
      } catch (error) {
        if (statusCodeOf(error) !== 404 || !/no such image/i.test(engineMessage(error)) || !effective.pull || snapshot) throw error;
        await pullImage(docker, image, { onProgress: effective.onPullProgress, signal });
        created = await createOnce();
      }
    } catch (error) {
      egressTransport?.close();
      throw mapCreateError(error, endpoint, policy);
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
      if (snapshot) await restoreSnapshotWorkspace(container, { user: policy.user, workspace: policy.workspace });
      const audit = withSnapshotRecord(auditFromInspect(policy, inspect, engineInfo, notes), snapshot);
      const driverOptions = { container, policy, audit, outOfMemoryBaseline: 0, deadManSwitch, docker };
      if (allow.length === 0) return driverFor(driverOptions, effective);
      // The notes array is live: denials are appended as the proxy refuses requests (core copies it per audit()).
      const liveNotes = [...(audit.notes ?? [])];
      const egress = await startAllowlist({
        container,
        allow,
        settings: effective,
        networkMode: inspect.HostConfig.NetworkMode ?? "none",
        notes: liveNotes,
        transport: egressTransport!,
      });
      const allowlistAudit: DriverAudit = { ...audit, policies: { ...audit.policies, network: egress.record }, notes: liveNotes };
      return driverFor({ ...driverOptions, audit: allowlistAudit, egress }, effective);
    } catch (error) {
      await removeQuietly(container).catch(() => {});
      deadManSwitch?.release();
      egressTransport?.close();
      throw mapCreateError(error, endpoint, policy);
    }
  }

  async function connect(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<DockerDriver> {
    throwIfAborted(request.signal, "docker");
    const container = docker.getContainer(request.sandboxId);
    let inspect: Docker.ContainerInspectInfo;
    try {
      inspect = await container.inspect();
    } catch (error) {
      if (isConnectionError(error)) throw engineUnavailable(endpoint, error);
      if (statusCodeOf(error) === 404) throw noSuchSandbox(request.sandboxId);
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
    const policy: RequestedPolicy = policyFromContainer(inspect, resolved);
    const mismatches = findMismatches(policy, inspect);
    if (mismatches.length > 0) throw policyNotEnforced(mismatches, []);
    const engineInfo = await engineInfoOf(docker, endpoint);
    const audit = auditFromInspect(policy, inspect, engineInfo, ["attached with connect(); policies read back from the running container"]);
    const attached = docker.getContainer(inspect.Id);
    return driverFor({ container: attached, policy, audit, outOfMemoryBaseline: await outOfMemoryBaseline(attached), docker }, resolved);
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
    list: (request) => listLabelledSandboxes(docker, request),
    getOrCreate: (request) => getOrCreateNamed({ docker, create, connect }, request),
    listSnapshots: () => listDockerSnapshots(docker),
    deleteSnapshot: (request) => deleteDockerSnapshot(docker, request.id),
  };
}

/** The driver for one running, verified container; it declares the sbx sandbox agent as the settings say (core attaches it). */
function driverFor(options: DockerDriverOptions, settings: ResolvedDockerSettings): DockerDriver {
  return new DockerDriver({ ...options, agentCommands: settings.agentCommands });
}

/** Alias of `createSandboxProvider`: `createSandbox(docker({ runtime: "runsc" }))`. */
export const docker = createSandboxProvider;
