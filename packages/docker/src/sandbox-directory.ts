import { InvalidArgumentError, PolicyNotEnforcedError, SandboxNotFoundError, SbxError, type ListedSandbox } from "@sbx/core";
import type { ProviderCreateRequest, ResolvedCreateOptions, SandboxDriverV1 } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { MANAGED_LABEL, METADATA_LABEL_PREFIX, POLICY_LABEL } from "./labels.js";
import { readPolicyLabel } from "./policy-label.js";

/** Label with the name a sandbox was created under by `getOrCreateSandbox` (the container's name is `sbx-<name>`). */
export const NAME_LABEL = "sbx.name";

/** How long `getOrCreate` waits for a sandbox of the name that another caller is still starting (or still removing). */
const NAMED_WAIT_MS = 60_000;
/** Pause between looks while it waits. */
const NAMED_POLL_MS = 100;

/** The container name of a named sandbox: the engine refuses a second container of one name (409), which makes get-or-create race-free. */
export function containerNameFor(name: string): string {
  return `sbx-${name}`;
}

/** The name and label a named sandbox's container is created with, on top of its config. */
export function namedContainerConfig(name: string, config: Docker.ContainerCreateOptions): Docker.ContainerCreateOptions {
  return { ...config, name: containerNameFor(name), Labels: { ...config.Labels, [NAME_LABEL]: name } } as Docker.ContainerCreateOptions;
}

/** The engine state as a listed sandbox's state. */
function stateOf(state: string): ListedSandbox["state"] {
  if (state === "running") return "running";
  if (state === "paused") return "paused";
  if (state === "created") return "starting";
  return "stopped";
}

/**
 * The engine's sbx containers carrying every one of `labels` (as `sbx.metadata.<key>` labels, filtered by the engine),
 * as listed sandboxes: id, labels, created time, state and name. Containers only a caller with access to the engine can
 * label, never the sandbox itself.
 */
export async function listLabelledSandboxes(
  docker: Docker,
  request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal },
): Promise<ListedSandbox[]> {
  const filters = [`${MANAGED_LABEL}=1`, ...Object.entries(request.labels).map(([key, value]) => `${METADATA_LABEL_PREFIX}${key}=${value}`)];
  const containers = await docker.listContainers({
    all: true,
    filters: { label: filters },
    abortSignal: request.signal,
  } as Docker.ContainerListOptions);
  return containers.map((info) => {
    const containerLabels = info.Labels ?? {};
    const labels: Record<string, string> = {};
    for (const [key, value] of Object.entries(containerLabels))
      if (key.startsWith(METADATA_LABEL_PREFIX)) labels[key.slice(METADATA_LABEL_PREFIX.length)] = value;
    return {
      id: info.Id,
      labels,
      createdAt: new Date(info.Created * 1000).toISOString(),
      state: stateOf(info.State),
      name: containerLabels[NAME_LABEL] ?? null,
    };
  });
}

/** What `getOrCreateNamed` uses of the provider. */
export interface NamedSandboxOperations {
  readonly docker: Docker;
  /** The provider's create, with the container named. */
  create(request: ProviderCreateRequest & { name: string }): Promise<SandboxDriverV1>;
  /** The provider's connect. */
  connect(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<SandboxDriverV1>;
}

/** True for the engine's answer that a container of that name exists (409 Conflict, "is already in use"), however core wrapped it. */
function isNameConflict(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    const status = (current as { statusCode?: unknown }).statusCode;
    const message = String((current as { message?: unknown }).message ?? "");
    if (status === 409 && /already in use/i.test(message)) return true;
    if (/Conflict\. The container name .* is already in use/i.test(message)) return true;
  }
  return false;
}

/**
 * Get-or-create by name (ADR 0050): create the container named `sbx-<name>`; when the engine answers that the name is
 * taken, attach to that container once it runs (another caller, in this process or another, created it). Exactly one
 * caller creates: the engine keeps names unique. The existing sandbox's recorded policy must match what this caller
 * asks for (egress, user, and any limits given), else `PolicyNotEnforcedError`: a caller never receives a sandbox with
 * a policy other than its own without being told. Waits at most 60 s for one being started or removed by another caller.
 */
export async function getOrCreateNamed(
  operations: NamedSandboxOperations,
  request: ProviderCreateRequest & { name: string },
): Promise<{ driver: SandboxDriverV1; created: boolean }> {
  const containerName = containerNameFor(request.name);
  const giveUpAt = Date.now() + NAMED_WAIT_MS;
  for (;;) {
    try {
      return { driver: await operations.create(request), created: true };
    } catch (error) {
      if (!isNameConflict(error)) throw error;
    }
    const inspect = await operations.docker
      .getContainer(containerName)
      .inspect()
      .catch((error: unknown) => {
        if ((error as { statusCode?: number }).statusCode === 404) return undefined;
        throw error;
      });
    if (inspect) {
      if (inspect.Config.Labels?.[MANAGED_LABEL] !== "1")
        throw new InvalidArgumentError({
          field: "options.name",
          backend: "docker",
          message: `Invalid options.name: the container name ${containerName} is taken by a container sbx did not create; choose another name.`,
        });
      refuseOtherPolicy(request.name, request.options, inspect.Config.Labels?.[POLICY_LABEL]);
      if (inspect.State.Running) {
        try {
          return { driver: await operations.connect({ sandboxId: inspect.Id, options: request.options, signal: request.signal }), created: false };
        } catch (error) {
          if (!(SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND")) throw error;
        }
      }
    }
    if (Date.now() > giveUpAt)
      throw new SandboxNotFoundError({
        backend: "docker",
        sandboxId: containerName,
        message: `The Docker sandbox named ${JSON.stringify(request.name)} exists but did not start running (or finish being removed) within ${NAMED_WAIT_MS} ms.`,
      });
    await new Promise((resolve) => setTimeout(resolve, NAMED_POLL_MS));
  }
}

/** Refuses attaching to a named sandbox whose recorded policy differs from what this caller asks for. */
function refuseOtherPolicy(name: string, options: ResolvedCreateOptions, labelText: string | undefined): void {
  const recorded = readPolicyLabel(labelText);
  const differences: string[] = [];
  if (recorded.egress !== options.network.egress) differences.push(`egress ${String(recorded.egress)} (asked: ${options.network.egress})`);
  if (recorded.user !== options.user) differences.push(`user ${String(recorded.user)} (asked: ${options.user})`);
  for (const limit of ["cpus", "memoryMiB", "pids"] as const) {
    const asked = options.limits?.[limit];
    if (asked !== undefined && recorded[limit] !== asked) differences.push(`${limit} ${String(recorded[limit])} (asked: ${asked})`);
  }
  if ((options.network.allow ?? []).length > 0) differences.push("an egress allowlist (attaching to a named sandbox's allowlist is not supported)");
  if (differences.length > 0)
    throw new PolicyNotEnforcedError({
      backend: "docker",
      policy: "named-sandbox",
      message: `The Docker sandbox named ${JSON.stringify(name)} exists with another policy: ${differences.join("; ")}. Refusing to hand it out as if it had yours.`,
    });
}
