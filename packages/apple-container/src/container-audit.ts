import { PolicyNotEnforcedError } from "@sbx/core";
import type { DriverAudit, ResolvedCreateOptions } from "@sbx/core/adapter";
import type { CliVersion, ContainerRecord } from "./container-output.js";
import type { ContainerRunPlan } from "./container-run-plan.js";

const MIB = 1024 * 1024;

function refuse(policy: string, message: string): never {
  throw new PolicyNotEnforcedError({
    backend: "apple-container",
    policy,
    message: `${message} The sandbox was deleted rather than run with a weaker policy.`,
  });
}

/**
 * The audit record of a new sandbox from what `container inspect` reports, never from what was asked; any mismatch
 * with the request fails closed (`PolicyNotEnforcedError`): networks attached under deny, CPUs or memory other than
 * requested, a mount missing or writable when asked read-only.
 */
export function auditFromInspect(options: {
  record: ContainerRecord;
  plan: ContainerRunPlan;
  create: ResolvedCreateOptions;
  version: CliVersion;
}): DriverAudit {
  const { record, plan, create, version } = options;
  const deny = create.network.egress === "deny";
  if (deny && (record.configuredNetworks.length > 0 || record.attachedNetworks > 0)) {
    refuse(
      "network",
      `Egress deny was asked, but container reports networks ${JSON.stringify(record.configuredNetworks)} (${record.attachedNetworks} attached).`,
    );
  }
  const memoryMiB = record.memoryInBytes === undefined ? undefined : record.memoryInBytes / MIB;
  if (plan.requestedLimits?.cpus !== undefined && record.cpus !== plan.requestedLimits.cpus) {
    refuse("limits", `${plan.requestedLimits.cpus} CPUs were asked, container reports ${String(record.cpus)}.`);
  }
  if (plan.requestedLimits?.memoryMiB !== undefined && memoryMiB !== plan.requestedLimits.memoryMiB) {
    refuse("limits", `${plan.requestedLimits.memoryMiB} MiB were asked, container reports ${String(memoryMiB)} MiB.`);
  }
  const appliedMounts = create.mounts.map((mount) => {
    const applied = record.mounts.find((entry) => entry.destination === mount.sandboxPath && entry.source === mount.hostPath);
    if (!applied) refuse("mounts", `The mount of ${mount.hostPath} at ${mount.sandboxPath} is missing from container's report.`);
    const readOnly = applied.options.includes("ro") || applied.options.includes("readonly");
    if (mount.readOnly && !readOnly) refuse("mounts", `${mount.sandboxPath} was asked read-only, container reports it writable.`);
    return { hostPath: applied.source, sandboxPath: applied.destination, readOnly, type: applied.type };
  });
  return {
    backendVersion: `Apple container ${version.version} (build ${version.build}, commit ${version.commit})`,
    policies: {
      network: {
        ...plan.network,
        applied: { egress: record.configuredNetworks.length === 0 ? "deny" : "allow", networks: [...record.configuredNetworks] },
      },
      limits: {
        requested: plan.requestedLimits,
        applied: { cpus: record.cpus ?? null, memoryMiB: memoryMiB ?? null },
        enforcement:
          "Each sandbox is its own VM: container run --cpus gives it that many vCPUs (plus one of overhead) with a cgroup cpu.max of the same, and --memory sets the guest's cgroup memory limit (the VM gets 128 MiB more), read back from container inspect. No process-count limit exists (refused if asked).",
      },
      mounts: {
        requested: create.mounts,
        applied: appliedMounts,
        enforcement:
          appliedMounts.length === 0
            ? "No host paths are shared into the VM."
            : "virtiofs shares of host directories; a read-only one is read-only at the hypervisor (VZSharedDirectory readOnly) and in the guest mount. Files keep their host ownership and writes happen as the macOS user running the VM.",
      },
      user: {
        requested: create.user,
        applied: plan.commandUser,
        enforcement:
          create.user === "root"
            ? "Root inside the VM as requested (container has no user namespaces: uid 0 in the container is uid 0 in the VM, which is its own kernel)."
            : `Every command, file operation and code run is a container exec as ${plan.commandUser}; only the VM's init (the lifetime deadline) and sbx's kill helper run as root.`,
      },
      lifetime: {
        requested: { timeoutMs: create.timeoutMs },
        applied: { deadline: `sleep ${plan.lifetimeSeconds}`, expiresAt: new Date(plan.expiresAt).toISOString(), autoRemove: true },
        enforcement:
          "The VM's init is `sleep <lifetime>` as root: when it exits the VM stops and --rm deletes it, even if this process died; the sandbox user cannot signal it. This process also deletes the container at expiry, and sweepOrphans() deletes expired sbx containers by label.",
      },
    },
    notes: [`container reports image ${record.image ?? "unknown"} and state ${record.state}.`],
  };
}
