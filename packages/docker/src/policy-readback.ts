import { PolicyNotEnforcedError } from "@sbx/core";
import type { DriverAudit } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { capabilitiesAdded, containerUserFor, type RequestedPolicy } from "./container-config.js";
import type { ResolvedDockerSettings } from "./docker-settings.js";
import { SANDBOX_SOCKET_DIRECTORY } from "./egress/egress-socket.js";
import { EXPIRES_AT_LABEL, POLICY_LABEL } from "./labels.js";
import { readPolicyLabel } from "./policy-label.js";

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
  expect(
    "capabilities.add",
    capabilitiesAdded(policy),
    (host.CapAdd ?? []).map((name: string) => name.toUpperCase().replace(/^CAP_/, "")),
  );
  expect(
    "privileges.noNewPrivileges",
    true,
    (host.SecurityOpt ?? []).some((option: string) => /^no-new-privileges(:true|=true)?$/.test(option)),
  );
  expect("privileges.privileged", false, host.Privileged ?? false);
  expect("limits.pids", policy.pids, host.PidsLimit);
  expect("limits.memoryMiB", policy.memoryMiB * MIB, host.Memory);
  expect("limits.memorySwap", policy.memoryMiB * MIB, host.MemorySwap);
  expect("limits.cpus", Math.round(policy.cpus * 1e9), host.NanoCpus);
  expect("init", true, host.Init === true);
  expect("rootFilesystem.readOnly", true, host.ReadonlyRootfs === true);
  expect("logging", "none", host.LogConfig?.Type);
  expect("user", containerUserFor(policy), inspect.Config.User);
  if (policy.runtime) expect("runtime", policy.runtime, host.Runtime);
  const workspaceMount = inspect.Mounts.find((mount) => mount.Destination === policy.workspace);
  expect("rootFilesystem.workspace", "volume:rw", workspaceMount ? `${workspaceMount.Type}:${workspaceMount.RW ? "rw" : "ro"}` : "missing");
  for (const mount of policy.mounts) {
    const applied = inspect.Mounts.find((candidate) => candidate.Destination === mount.sandboxPath);
    expect(
      `mounts.${mount.sandboxPath}`,
      { source: mount.hostPath, readOnly: mount.readOnly },
      applied ? { source: applied.Source, readOnly: !applied.RW } : null,
    );
  }
  return mismatches;
}

/** The requested policy recorded in a container's labels (`connect`): fields an older label lacks take the settings' defaults. */
export function policyFromContainer(inspect: Docker.ContainerInspectInfo, settings: ResolvedDockerSettings): RequestedPolicy {
  const labels = inspect.Config.Labels ?? {};
  const recorded = readPolicyLabel(labels[POLICY_LABEL]);
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
    mounts: callerMounts(inspect),
  };
}

/** The caller's bind mounts of a container (the allowlist's socket directory, adr/0027, is the network policy's, not a caller's). */
function callerMounts(inspect: Docker.ContainerInspectInfo): Array<{ hostPath: string; sandboxPath: string; readOnly: boolean }> {
  return inspect.Mounts.filter((mount) => mount.Type === "bind" && mount.Destination !== SANDBOX_SOCKET_DIRECTORY).map((mount) => ({
    hostPath: mount.Source,
    sandboxPath: mount.Destination,
    readOnly: !mount.RW,
  }));
}

/** The fail-closed error for mismatches or engine warnings. */
export function policyNotEnforced(mismatches: readonly PolicyMismatch[], warnings: readonly string[]): PolicyNotEnforcedError {
  const first = mismatches[0];
  const details = [
    ...mismatches.map(
      (mismatch) => `${mismatch.policy}: requested ${JSON.stringify(mismatch.requested)}, engine reports ${JSON.stringify(mismatch.applied)}`,
    ),
    ...warnings.map((warning) => `engine warning: ${warning}`),
  ];
  return new PolicyNotEnforcedError({
    backend: "docker",
    policy: first?.policy ?? "limits",
    message: `The Docker Engine did not apply the requested sandbox policy, so the container was removed (fail closed): ${details.join("; ")}.`,
  });
}

/** Builds the audit record's policies from the engine's read-back. */
export function auditFromInspect(
  policy: RequestedPolicy,
  inspect: Docker.ContainerInspectInfo,
  engine: { version: string; apiVersion: string; securityOptions?: readonly string[] },
  notes: readonly string[] = [],
): DriverAudit {
  const host = inspect.HostConfig as Docker.HostConfig & Record<string, unknown>;
  const appArmorProfile = (inspect as { AppArmorProfile?: string }).AppArmorProfile ?? "";
  const appArmorActive =
    (engine.securityOptions ?? []).some((option) => /name=apparmor/.test(option)) && appArmorProfile !== "" && appArmorProfile !== "unconfined";
  const seccompActive =
    (engine.securityOptions ?? []).some((option) => /name=seccomp/.test(option)) &&
    !(host.SecurityOpt ?? []).some((option: string) => /^seccomp[=:]unconfined$/.test(option));
  const securityModules = [
    seccompActive ? "the engine's default seccomp profile" : undefined,
    appArmorActive ? `the AppArmor profile ${JSON.stringify(appArmorProfile)}` : undefined,
  ].filter((item): item is string => item !== undefined);
  const workspaceMount = inspect.Mounts.find((mount) => mount.Destination === policy.workspace);
  const bindMounts = callerMounts(inspect);
  const runtime = (host.Runtime as string | undefined) || "runc";
  return {
    backendVersion: `Docker Engine ${engine.version} (API ${engine.apiVersion})`,
    policies: {
      network: {
        requested: { egress: policy.egress },
        applied: { egress: host.NetworkMode === "none" ? "deny" : "allow", networkMode: host.NetworkMode },
        enforcement:
          host.NetworkMode === "none"
            ? "Docker NetworkMode none (and NetworkDisabled): the container has only a loopback interface, so no packet can leave it."
            : `Docker network ${JSON.stringify(host.NetworkMode)}: unrestricted egress through that network (Docker has no per-host egress filter).`,
      },
      limits: {
        requested: { cpus: policy.cpus, memoryMiB: policy.memoryMiB, pids: policy.pids },
        applied: {
          cpus: (host.NanoCpus ?? 0) / 1e9,
          memoryMiB: (host.Memory ?? 0) / MIB,
          memorySwapMiB: (host.MemorySwap ?? 0) / MIB,
          pids: host.PidsLimit,
        },
        enforcement:
          "Kernel cgroup limits set by the engine (NanoCpus, Memory with MemorySwap equal so no swap, PidsLimit), read back from container inspect after create.",
      },
      mounts: {
        requested: policy.mounts,
        applied: bindMounts,
        enforcement:
          bindMounts.length === 0
            ? "No host paths are mounted."
            : "Docker bind mounts (propagation rprivate); read-only ones are mounted ro by the kernel.",
      },
      user: {
        requested: policy.userKind,
        applied: policy.user,
        enforcement:
          policy.userKind === "root"
            ? `Root inside the container as requested (uid 0, every capability dropped, no-new-privileges). sbx's lifetime enforcement runs as another uid (container User ${inspect.Config.User}: Docker's init, the deadline, the dead-man's switch), which a root without capabilities can neither signal nor trace.`
            : `Every command, file operation and code run executes as unprivileged ${policy.user} with no capabilities (each exec's User; no-new-privileges). Only sbx's own enforcement runs as root (container User ${inspect.Config.User}): Docker's init, the lifetime deadline and the kill helper, which the sandbox user cannot signal or trace.`,
      },
      lifetime: {
        requested: { timeoutMs: policy.lifetimeSeconds * 1000, endsWithHost: policy.endsWithHost },
        applied: {
          deadline: `sleep ${policy.lifetimeSeconds}`,
          deadlineUser: inspect.Config.User,
          expiresAt: policy.expiresAt,
          autoRemove: host.AutoRemove === true,
          endsWithHost: inspect.Config.OpenStdin === true && inspect.Config.StdinOnce === true,
        },
        enforcement: [
          policy.userKind === "root"
            ? `A deadline under Docker's init ends the container after its lifetime. This sandbox runs as root, so the init and the deadline run as ${inspect.Config.User} instead: root without capabilities (no CAP_KILL, CAP_SETUID, CAP_SYS_PTRACE) cannot signal, trace or become that uid, so it cannot stop its own deadline; the host process also removes the container at expiry while it lives.`
            : `A root deadline under Docker's init ends the container after its lifetime; sandboxed code (${policy.user}, no capabilities) can neither signal nor trace it, and the host process also removes the container at expiry while it lives.`,
          policy.endsWithHost
            ? "Dead-man's switch: the creating process holds an attach to the container's stdin; when that process exits or dies (SIGKILL included) the engine closes stdin and the container ends within seconds."
            : "keepAfterHostExit: the sandbox outlives its creating process until its lifetime ends (for connect from another process).",
          "AutoRemove deletes the container and its workspace volume; sweepOrphans() removes anything left behind.",
        ].join(" "),
      },
      capabilities: {
        requested: { drop: ["ALL"], add: capabilitiesAdded(policy) },
        applied: { drop: host.CapDrop ?? [], add: host.CapAdd ?? [] },
        enforcement:
          policy.userKind === "root"
            ? "Docker CapDrop ALL: no Linux capabilities, even for root."
            : `Docker CapDrop ALL, plus CAP_KILL for root processes only (sbx's kill helper); sandboxed code runs as ${policy.user} and holds no capability (no-new-privileges keeps it from gaining any).`,
      },
      privileges: {
        requested: { noNewPrivileges: true, privileged: false },
        applied: {
          securityOptions: host.SecurityOpt ?? [],
          privileged: host.Privileged ?? false,
          seccomp: engine.securityOptions ?? [],
          appArmorProfile: appArmorActive ? appArmorProfile : null,
        },
        enforcement: `no-new-privileges blocks setuid escalation; ${securityModules.length > 0 ? `${securityModules.join(" and ")} ${securityModules.length > 1 ? "stay" : "stays"} on` : "the engine reports no seccomp or AppArmor confinement"}${appArmorActive ? "" : " (AppArmor is not active on this engine)"}.`,
      },
      rootFilesystem: {
        requested: { readOnly: true, workspace: policy.workspace, workspaceSizeMiB: policy.workspaceSizeMiB, tmpSizeMiB: policy.tmpSizeMiB },
        applied: {
          readOnly: host.ReadonlyRootfs === true,
          workspace: workspaceMount ? { type: workspaceMount.Type, driver: workspaceMount.Driver, writable: workspaceMount.RW } : null,
          tmpfs: host.Tmpfs ?? {},
        },
        enforcement: `ReadonlyRootfs: the image is immutable; writes go to the workspace (a ${policy.workspaceSizeMiB} MiB tmpfs-backed volume, sized inside the ${policy.memoryMiB} MiB memory limit so a full workspace gives ENOSPC) or /tmp (${policy.tmpSizeMiB} MiB tmpfs, noexec).`,
      },
      runtime: {
        requested: policy.runtime ?? "engine default",
        applied: runtime,
        enforcement:
          runtime === "runsc"
            ? "gVisor (runsc): a user-space kernel between the code and the host kernel."
            : `${runtime}: namespaces and cgroups on the shared host kernel (not a VM boundary; use runtime "runsc" for gVisor).`,
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
      "Docker has no per-host egress filter of its own: network.allow is enforced by sbx's host-side allowlist proxy (adr/0021).",
      'Containers share the host kernel unless runtime "runsc" (gVisor) is used.',
      "Files are read and written by execs as the sandbox user (symlinks resolved inside the sandbox with that user's rights, confined to the workspace).",
      ...notes,
    ],
  };
}
