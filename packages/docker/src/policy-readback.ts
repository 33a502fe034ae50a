import { PolicyNotEnforcedError, type DriverAudit } from "@sbx/core";
import type Docker from "dockerode";
import type { RequestedPolicy } from "./container-config.js";

const MIB = 1024 * 1024;

/** One difference between what was requested and what the engine reports it applied. */
export interface PolicyMismatch {
  readonly policy: string;
  readonly requested: unknown;
  readonly applied: unknown;
}

/** Compares the engine's view of the container (`inspect`) with the requested policy. Empty when all applied. */
export function findMismatches(policy: RequestedPolicy, inspect: Docker.ContainerInspectInfo): PolicyMismatch[] {
  const host = inspect.HostConfig as Docker.HostConfig & Record<string, unknown>;
  const mismatches: PolicyMismatch[] = [];
  const expect = (name: string, requested: unknown, applied: unknown) => {
    if (JSON.stringify(requested) !== JSON.stringify(applied)) mismatches.push({ policy: name, requested, applied });
  };
  expect("network", policy.networkMode, host.NetworkMode);
  expect("capabilities.drop", true, (host.CapDrop ?? []).map((name: string) => name.toUpperCase()).includes("ALL"));
  expect("capabilities.add", 0, (host.CapAdd ?? []).length);
  expect("privileges.noNewPrivileges", true, (host.SecurityOpt ?? []).some((option: string) => /^no-new-privileges(:true|=true)?$/.test(option)));
  expect("privileges.privileged", false, host.Privileged ?? false);
  expect("limits.pids", policy.pids, host.PidsLimit);
  expect("limits.memoryMiB", policy.memoryMiB * MIB, host.Memory);
  expect("limits.memorySwap", policy.memoryMiB * MIB, host.MemorySwap);
  expect("limits.cpus", Math.round(policy.cpus * 1e9), host.NanoCpus);
  expect("init", true, host.Init === true);
  expect("rootFilesystem.readOnly", true, host.ReadonlyRootfs === true);
  expect("logging", "none", host.LogConfig?.Type);
  expect("user", policy.user, inspect.Config.User);
  if (policy.runtime) expect("runtime", policy.runtime, host.Runtime);
  const workspaceMount = inspect.Mounts.find((mount) => mount.Destination === policy.workspace);
  expect("rootFilesystem.workspace", "volume:rw", workspaceMount ? `${workspaceMount.Type}:${workspaceMount.RW ? "rw" : "ro"}` : "missing");
  for (const mount of policy.mounts) {
    const applied = inspect.Mounts.find((candidate) => candidate.Destination === mount.sandboxPath);
    expect(`mounts.${mount.sandboxPath}`, { source: mount.hostPath, readOnly: mount.readOnly }, applied ? { source: applied.Source, readOnly: !applied.RW } : null);
  }
  return mismatches;
}

/** The fail-closed error for mismatches or engine warnings. */
export function policyNotEnforced(mismatches: readonly PolicyMismatch[], warnings: readonly string[]): PolicyNotEnforcedError {
  const first = mismatches[0];
  const details = [
    ...mismatches.map((mismatch) => `${mismatch.policy}: requested ${JSON.stringify(mismatch.requested)}, engine reports ${JSON.stringify(mismatch.applied)}`),
    ...warnings.map((warning) => `engine warning: ${warning}`),
  ];
  return new PolicyNotEnforcedError({
    backend: "docker",
    policy: first?.policy ?? "limits",
    message: `The Docker Engine did not apply the requested sandbox policy, so the container was removed (fail closed): ${details.join("; ")}.`,
  });
}

/** Builds the audit record's policies from the engine's read-back. */
export function auditFromInspect(policy: RequestedPolicy, inspect: Docker.ContainerInspectInfo, engine: { version: string; apiVersion: string; securityOptions?: readonly string[] }, notes: readonly string[] = []): DriverAudit {
  const host = inspect.HostConfig as Docker.HostConfig & Record<string, unknown>;
  const workspaceMount = inspect.Mounts.find((mount) => mount.Destination === policy.workspace);
  const bindMounts = inspect.Mounts.filter((mount) => mount.Type === "bind").map((mount) => ({ hostPath: mount.Source, sandboxPath: mount.Destination, readOnly: !mount.RW }));
  const runtime = (host.Runtime as string | undefined) || "runc";
  return {
    backendVersion: `Docker Engine ${engine.version} (API ${engine.apiVersion})`,
    policies: {
      network: {
        requested: { egress: policy.egress },
        applied: { egress: host.NetworkMode === "none" ? "deny" : "allow", networkMode: host.NetworkMode },
        enforcement: host.NetworkMode === "none"
          ? "Docker NetworkMode none (and NetworkDisabled): the container has only a loopback interface, so no packet can leave it."
          : `Docker network ${JSON.stringify(host.NetworkMode)}: unrestricted egress through that network (Docker has no per-host egress filter).`,
      },
      limits: {
        requested: { cpus: policy.cpus, memoryMiB: policy.memoryMiB, pids: policy.pids },
        applied: { cpus: (host.NanoCpus ?? 0) / 1e9, memoryMiB: (host.Memory ?? 0) / MIB, memorySwapMiB: (host.MemorySwap ?? 0) / MIB, pids: host.PidsLimit },
        enforcement: "Kernel cgroup limits set by the engine (NanoCpus, Memory with MemorySwap equal so no swap, PidsLimit), read back from container inspect after create.",
      },
      mounts: {
        requested: policy.mounts,
        applied: bindMounts,
        enforcement: bindMounts.length === 0 ? "No host paths are mounted." : "Docker bind mounts (propagation rprivate); read-only ones are mounted ro by the kernel.",
      },
      user: {
        requested: policy.userKind,
        applied: inspect.Config.User || "image default",
        enforcement: policy.userKind === "root"
          ? "Root inside the container as requested (uid 0, every capability dropped, no-new-privileges)."
          : `Every process runs as unprivileged ${inspect.Config.User} (container User and every exec's User).`,
      },
      lifetime: {
        requested: { timeoutMs: policy.lifetimeSeconds * 1000 },
        applied: { pid1: `sleep ${policy.lifetimeSeconds}`, expiresAt: policy.expiresAt, autoRemove: host.AutoRemove === true },
        enforcement: "PID 1 is a deadline (sleep for the lifetime), so the container exits by itself even if the host process dies; AutoRemove deletes it, and sweepOrphans() removes any left behind.",
      },
      capabilities: {
        requested: { drop: ["ALL"], add: [] },
        applied: { drop: host.CapDrop ?? [], add: host.CapAdd ?? [] },
        enforcement: "Docker CapDrop ALL: no Linux capabilities, even for root.",
      },
      privileges: {
        requested: { noNewPrivileges: true, privileged: false },
        applied: { securityOptions: host.SecurityOpt ?? [], privileged: host.Privileged ?? false, seccomp: engine.securityOptions ?? [] },
        enforcement: "no-new-privileges blocks setuid escalation; the engine's default seccomp and AppArmor profiles stay on.",
      },
      rootFilesystem: {
        requested: { readOnly: true, workspace: policy.workspace, workspaceSizeMiB: policy.workspaceSizeMiB, tmpSizeMiB: policy.tmpSizeMiB },
        applied: { readOnly: host.ReadonlyRootfs === true, workspace: workspaceMount ? { type: workspaceMount.Type, driver: workspaceMount.Driver, writable: workspaceMount.RW } : null, tmpfs: host.Tmpfs ?? {} },
        enforcement: "ReadonlyRootfs: the image is immutable; writes go to the workspace (a size-capped tmpfs-backed volume the archive API can reach) or /tmp (tmpfs, noexec).",
      },
      runtime: {
        requested: policy.runtime ?? "engine default",
        applied: runtime,
        enforcement: runtime === "runsc" ? "gVisor (runsc): a user-space kernel between the code and the host kernel." : `${runtime}: namespaces and cgroups on the shared host kernel (not a VM boundary; use runtime "runsc" for gVisor).`,
      },
      logging: {
        requested: "none",
        applied: host.LogConfig?.Type ?? "unknown",
        enforcement: "LogConfig none: output written to PID 1's streams never reaches the host's disk.",
      },
      init: {
        requested: true,
        applied: host.Init === true,
        enforcement: "Docker's init (tini) is PID 1's parent: it reaps orphaned processes.",
      },
    },
    notes: [
      "Docker has no per-host egress filter: EGRESS_ALLOWLIST is off.",
      "Containers share the host kernel unless runtime \"runsc\" (gVisor) is used.",
      "Files move as uncompressed tar built and parsed by sbx (never compressed: CVE-2026-41567); keep the engine patched.",
      ...notes,
    ],
  };
}
