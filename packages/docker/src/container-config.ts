import type { Mount, ResolvedCreateOptions } from "@sbx/core";
import type Docker from "dockerode";
import { sandboxLabels, MANAGED_LABEL, SESSION_LABEL } from "./labels.js";
import type { ResolvedDockerSettings } from "./settings.js";

const MIB = 1024 * 1024;

/**
 * PID 1 of every sandbox: a deadline. The container ends by itself after its lifetime even if the host process
 * dies. Uses `sleep` (coreutils or busybox) and falls back to python3, so any image with `sh` works.
 */
export const DEADLINE_SCRIPT = 'if command -v sleep >/dev/null 2>&1; then exec sleep "$1"; fi; exec python3 -c "import sys,time; time.sleep(int(sys.argv[1]))" "$1"';

/** The policy a sandbox is created with, after defaults: what the read-back is compared against. */
export interface RequestedPolicy {
  readonly image: string;
  readonly egress: "deny" | "allow";
  readonly networkMode: string;
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly pids: number;
  readonly user: string;
  readonly userKind: "default" | "root";
  readonly runtime: string | undefined;
  readonly lifetimeSeconds: number;
  readonly expiresAt: string;
  readonly workspace: string;
  readonly workspaceSizeMiB: number;
  readonly tmpSizeMiB: number;
  readonly mounts: readonly Mount[];
}

/** Works out the requested policy from the caller's options and the provider settings. */
export function requestedPolicy(image: string, options: ResolvedCreateOptions, settings: ResolvedDockerSettings, now = Date.now()): RequestedPolicy {
  const lifetimeSeconds = Math.max(1, Math.ceil(options.timeoutMs / 1000));
  return {
    image,
    egress: options.network.egress,
    networkMode: options.network.egress === "allow" ? settings.bridgeNetwork : "none",
    cpus: options.limits?.cpus ?? settings.defaultLimits.cpus,
    memoryMiB: options.limits?.memoryMiB ?? settings.defaultLimits.memoryMiB,
    pids: options.limits?.pids ?? settings.defaultLimits.pids,
    user: options.user === "root" ? "0:0" : settings.user,
    userKind: options.user,
    runtime: settings.runtime,
    lifetimeSeconds,
    expiresAt: new Date(now + lifetimeSeconds * 1000).toISOString(),
    workspace: settings.workspace,
    workspaceSizeMiB: settings.workspaceSizeMiB,
    tmpSizeMiB: settings.tmpSizeMiB,
    mounts: options.mounts,
  };
}

/** The hardened container configuration (Engine API names) for a requested policy. */
export function buildContainerConfig(policy: RequestedPolicy, options: { session: string; metadata: Record<string, string> }): Docker.ContainerCreateOptions {
  const [uid, gid] = policy.user.split(":");
  const labels = sandboxLabels({
    session: options.session,
    expiresAt: new Date(policy.expiresAt),
    metadata: options.metadata,
    policy: { egress: policy.egress, cpus: policy.cpus, memoryMiB: policy.memoryMiB, pids: policy.pids, user: policy.userKind, lifetimeSeconds: policy.lifetimeSeconds, runtime: policy.runtime ?? null },
  });
  const memoryBytes = policy.memoryMiB * MIB;
  const mounts: Docker.MountSettings[] = [
    {
      // An anonymous local volume backed by tmpfs: size-capped, owned by the sandbox user, removed with the
      // container, and (unlike a plain tmpfs mount) visible to the engine's archive API.
      Type: "volume",
      Target: policy.workspace,
      VolumeOptions: {
        NoCopy: true,
        Labels: { [MANAGED_LABEL]: "1", [SESSION_LABEL]: options.session },
        DriverConfig: { Name: "local", Options: { type: "tmpfs", device: "tmpfs", o: `size=${policy.workspaceSizeMiB}m,uid=${uid},gid=${gid},mode=0700` } },
      },
    } as unknown as Docker.MountSettings,
    ...policy.mounts.map((mount) => ({ Type: "bind" as const, Source: mount.hostPath, Target: mount.sandboxPath, ReadOnly: mount.readOnly, BindOptions: { Propagation: "rprivate" as const } })),
  ];
  const hostConfig: Docker.HostConfig & Record<string, unknown> = {
    NetworkMode: policy.networkMode,
    CapDrop: ["ALL"],
    CapAdd: [],
    SecurityOpt: ["no-new-privileges:true"],
    Privileged: false,
    ReadonlyRootfs: true,
    Tmpfs: { "/tmp": `rw,noexec,nosuid,nodev,size=${policy.tmpSizeMiB}m` },
    Mounts: mounts,
    Init: true,
    PidsLimit: policy.pids,
    Memory: memoryBytes,
    MemorySwap: memoryBytes,
    OomKillDisable: false,
    OomScoreAdj: 500,
    NanoCpus: Math.round(policy.cpus * 1e9),
    Ulimits: [{ Name: "nofile", Soft: 4096, Hard: 4096 }, { Name: "core", Soft: 0, Hard: 0 }],
    ShmSize: 64 * MIB,
    IpcMode: "private",
    LogConfig: { Type: "none", Config: {} },
    RestartPolicy: { Name: "no" },
    AutoRemove: true,
  };
  if (policy.runtime) hostConfig.Runtime = policy.runtime;
  return {
    Image: policy.image,
    Entrypoint: ["sh", "-c", DEADLINE_SCRIPT, "sbx-deadline", String(policy.lifetimeSeconds)],
    Cmd: [],
    User: policy.user,
    WorkingDir: policy.workspace,
    Env: [`HOME=${policy.workspace}`],
    Labels: labels,
    Tty: false,
    OpenStdin: false,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    NetworkDisabled: policy.egress === "deny",
    StopTimeout: 1,
    HostConfig: hostConfig,
  } as Docker.ContainerCreateOptions;
}
