import { CapabilityNotSupportedError, InvalidArgumentError, type PolicyRecord } from "@sbx/core";
import { backendsSupporting, type ResolvedCreateOptions } from "@sbx/core/adapter";

/** The sandbox's workspace inside the VM (created by `run -w`, owned by the sandbox user unless a mount is there). */
export const APPLE_CONTAINER_WORKSPACE = "/workspace";
/** Label every sbx container carries, for listing and reaping orphans (the CLI has no filter: sbx filters `ls`). */
export const MANAGED_LABEL = "dev.sbx.managed";
/** Label holding the sandbox's expiry (milliseconds since the epoch), for the orphan sweep. */
export const EXPIRES_LABEL = "dev.sbx.expires-at";
/** Label holding the creating process's pid, for the orphan sweep. */
export const OWNER_PID_LABEL = "dev.sbx.owner.pid";
/** Prefix of the labels carrying the caller's `metadata`. */
export const METADATA_LABEL_PREFIX = "dev.sbx.meta.";
/** The smallest memory limit the CLI accepts (`minimum memory amount allowed is 200 MiB`). */
export const MINIMUM_MEMORY_MIB = 200;
/** Backends with RESOURCE_LIMITS that still have no process-count limit (so not named as able to apply `pids`). */
const BACKENDS_WITHOUT_PIDS_LIMIT = new Set(["modal", "apple-container"]);

/** The `container run` arguments for one sandbox and the requested side of its audit record. */
export interface ContainerRunPlan {
  readonly arguments: string[];
  readonly lifetimeSeconds: number;
  readonly expiresAt: number;
  readonly commandUser: string;
  readonly requestedLimits: { cpus?: number; memoryMiB?: number } | null;
  readonly network: PolicyRecord;
}

function refuseCommaOrNewline(value: string, field: string): void {
  if (/[,\n\r]/.test(value)) {
    throw new InvalidArgumentError({
      backend: "apple-container",
      field,
      message: `Invalid ${field} ${JSON.stringify(value)}: container's --mount splits on ",", so such a path cannot be mounted; use a path without "," (a symlink works).`,
    });
  }
}

function limitArguments(limits: ResolvedCreateOptions["limits"]): { arguments: string[]; requested: ContainerRunPlan["requestedLimits"] } {
  if (!limits || Object.values(limits).every((value) => value === undefined)) return { arguments: [], requested: null };
  if (limits.pids !== undefined) {
    throw new CapabilityNotSupportedError({
      capability: "RESOURCE_LIMITS",
      backend: "apple-container",
      supportedBy: backendsSupporting("RESOURCE_LIMITS", "apple-container").filter((backend) => !BACKENDS_WITHOUT_PIDS_LIMIT.has(backend)),
      detail:
        "limits.pids: Apple's container has no process-count limit (only --ulimit nproc, which does not bind root), so it was refused rather than ignored",
    });
  }
  const args: string[] = [];
  const requested: { cpus?: number; memoryMiB?: number } = {};
  if (limits.cpus !== undefined) {
    if (!Number.isInteger(limits.cpus)) {
      throw new InvalidArgumentError({
        backend: "apple-container",
        field: "limits.cpus",
        message: `Invalid limits.cpus ${limits.cpus}: Apple's container gives a VM whole CPUs only; ask for a whole number.`,
      });
    }
    args.push("--cpus", String(limits.cpus));
    requested.cpus = limits.cpus;
  }
  if (limits.memoryMiB !== undefined) {
    if (limits.memoryMiB < MINIMUM_MEMORY_MIB) {
      throw new InvalidArgumentError({
        backend: "apple-container",
        field: "limits.memoryMiB",
        message: `Invalid limits.memoryMiB ${limits.memoryMiB}: Apple's container needs at least ${MINIMUM_MEMORY_MIB} MiB per sandbox.`,
      });
    }
    args.push("--memory", `${limits.memoryMiB}M`);
    requested.memoryMiB = limits.memoryMiB;
  }
  return { arguments: args, requested };
}

function metadataLabels(metadata: Readonly<Record<string, string>>): string[] {
  return Object.entries(metadata).flatMap(([key, value]) => {
    if (!/^[a-z0-9.-]+$/.test(key) || value.includes("=") || /[\n\r]/.test(value)) {
      throw new InvalidArgumentError({
        backend: "apple-container",
        field: `metadata.${key}`,
        message: `Invalid metadata ${JSON.stringify(key)}: container labels take lowercase keys of a-z, 0-9, "." and "-", and values without "=" or line breaks.`,
      });
    }
    return ["--label", `${METADATA_LABEL_PREFIX}${key}=${value}`];
  });
}

/**
 * Plans `container run` for a sandbox (pure: no CLI call). Egress deny is `--network none --no-dns` (no NIC in the
 * VM); allow is the default NAT network. Limits are whole CPUs and at least 200 MiB; `pids` is refused. Mounts are
 * virtiofs shares (`--mount type=bind`), read-only with `readonly`. The init process (root) gives the workspace to the
 * sandbox user, then is `sleep <lifetime>`: when it exits the VM stops and `--rm` deletes it, and the sandbox user cannot
 * signal it.
 */
export function planContainerRun(options: {
  readonly id: string;
  readonly image: string;
  readonly create: ResolvedCreateOptions;
  readonly defaultUser: string;
  readonly now: number;
  readonly ownerPid: number;
}): ContainerRunPlan {
  const { create } = options;
  const limits = limitArguments(create.limits);
  for (const [index, mount] of create.mounts.entries()) {
    refuseCommaOrNewline(mount.hostPath, `mounts.${index}.hostPath`);
    refuseCommaOrNewline(mount.sandboxPath, `mounts.${index}.sandboxPath`);
  }
  const lifetimeSeconds = Math.ceil(create.timeoutMs / 1000);
  const expiresAt = options.now + lifetimeSeconds * 1000;
  const deny = create.network.egress === "deny";
  const commandUser = create.user === "root" ? "0:0" : options.defaultUser;
  // A mount at the workspace keeps its host owner: never chown a host directory.
  const ownWorkspace = !create.mounts.some((mount) => mount.sandboxPath === APPLE_CONTAINER_WORKSPACE);
  const args = [
    "run",
    "--detach",
    "--rm",
    "--progress",
    "none",
    "--name",
    options.id,
    "--label",
    `${MANAGED_LABEL}=true`,
    "--label",
    `dev.sbx.id=${options.id}`,
    "--label",
    `${OWNER_PID_LABEL}=${options.ownerPid}`,
    "--label",
    `${EXPIRES_LABEL}=${expiresAt}`,
    ...metadataLabels(create.metadata),
    ...(deny ? ["--network", "none", "--no-dns"] : []),
    ...limits.arguments,
    ...create.mounts.flatMap((mount) => [
      "--mount",
      `type=bind,source=${mount.hostPath},target=${mount.sandboxPath}${mount.readOnly ? ",readonly" : ""}`,
    ]),
    "--user",
    "0:0",
    "--workdir",
    APPLE_CONTAINER_WORKSPACE,
    "--entrypoint",
    "sh",
    options.image,
    "-c",
    // The workspace (made by --workdir as root) becomes the sandbox user's, then init is the lifetime's sleep.
    ownWorkspace ? 'chown "$1" "$2"; exec sleep "$3"' : 'exec sleep "$3"',
    "sbx-init",
    commandUser,
    APPLE_CONTAINER_WORKSPACE,
    String(lifetimeSeconds),
  ];
  return {
    arguments: args,
    lifetimeSeconds,
    expiresAt,
    commandUser,
    requestedLimits: limits.requested,
    network: {
      requested: { egress: create.network.egress },
      applied: null,
      enforcement: deny
        ? "container run --network none --no-dns: the VM gets no network interface at all (a hypervisor-level absence, not a firewall); only loopback exists inside."
        : "The builtin NAT network (vmnet): unrestricted egress, and the Mac itself is reachable through the gateway address.",
    },
  };
}
