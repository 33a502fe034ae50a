import { InvalidArgumentError, type Mount } from "@sbx/core";
import type { ResolvedCreateOptions } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { sandboxLabels, volumeLabels } from "./labels.js";
import type { ResolvedDockerSettings } from "./docker-settings.js";

const MIB = 1024 * 1024;

/** The container's own user: root, so its deadline (PID 1's child) is out of reach of sandboxed code (uid 10001). */
export const CONTAINER_USER = "0:0";

/**
 * The container's own user when the sandbox itself runs as root: `nobody`. Docker's init, the deadline and the
 * dead-man's switch then run as a uid the sandbox's root cannot signal, trace or write the /proc files of: it has no
 * capability (no CAP_KILL, CAP_SETUID, CAP_SYS_PTRACE or CAP_DAC_OVERRIDE), and without them uid 0 is just another
 * uid to the kernel's permission checks. Were they root, a root sandbox could SIGSTOP them and outlive its lifetime
 * and its dead host (issue 19; ADR 0033).
 */
export const ROOT_SANDBOX_CONTAINER_USER = "65534:65534";

/** The container's own user (Docker's init, the deadline, the dead-man's switch) for a policy: never the command user. */
export function containerUserFor(policy: { userKind: "default" | "root" }): string {
  return policy.userKind === "root" ? ROOT_SANDBOX_CONTAINER_USER : CONTAINER_USER;
}

/** Headroom in MiB the memory limit keeps for processes beyond the workspace and /tmp tmpfs. */
export const MEMORY_HEADROOM_MIB = 64;

/**
 * The deadline, run as root under Docker's init: it ends the container after its lifetime (`sleep`, or python3 when
 * the image has no sleep), and, with `$2 = host-attached`, as soon as the creating host process lets go of the
 * container's stdin (a dead-man's switch: end-of-file when that process exits or dies, SIGKILL included).
 * Sandboxed code runs as another uid without capabilities, so it can neither signal nor trace these processes.
 * Arguments: $1 the lifetime in seconds, $2 `host-attached` or `detached`.
 */
export const DEADLINE_SCRIPT = [
  'if command -v sleep >/dev/null 2>&1; then (sleep "$1"; kill -9 $$) & else (python3 -c "import sys,time; time.sleep(int(sys.argv[1]))" "$1"; kill -9 $$) & fi',
  'if [ "$2" = host-attached ]; then cat >/dev/null; exit 0; fi',
  "exec 0<&-",
  "wait",
].join("\n");

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
  /** True: the sandbox ends when its creating host process exits (dead-man's switch on stdin). */
  readonly endsWithHost: boolean;
}

/** The workspace size for a memory limit: the explicit setting when it fits, else half of what /tmp leaves. */
export function workspaceSizeFor(memoryMiB: number, tmpSizeMiB: number, explicit: number | undefined): number {
  if (explicit !== undefined) {
    if (explicit + tmpSizeMiB > memoryMiB - MEMORY_HEADROOM_MIB) {
      throw new InvalidArgumentError({
        field: "settings.workspaceSizeMiB",
        backend: "docker",
        message: `Invalid settings.workspaceSizeMiB: ${explicit} MiB of workspace plus ${tmpSizeMiB} MiB of /tmp do not fit in the ${memoryMiB} MiB memory limit with ${MEMORY_HEADROOM_MIB} MiB left for processes (both are tmpfs, counted as memory); filling the workspace would call the OOM killer instead of giving ENOSPC. Lower it to at most ${Math.max(1, memoryMiB - MEMORY_HEADROOM_MIB - tmpSizeMiB)} or raise limits.memoryMiB.`,
      });
    }
    return explicit;
  }
  return Math.max(1, Math.floor((memoryMiB - tmpSizeMiB) / 2));
}

/** Works out the requested policy from the caller's options and the provider settings. */
export function requestedPolicy(image: string, options: ResolvedCreateOptions, settings: ResolvedDockerSettings, now = Date.now()): RequestedPolicy {
  const lifetimeSeconds = Math.max(1, Math.ceil(options.timeoutMs / 1000));
  const memoryMiB = options.limits?.memoryMiB ?? settings.defaultLimits.memoryMiB;
  return {
    image,
    egress: options.network.egress,
    networkMode: options.network.egress === "allow" ? settings.bridgeNetwork : "none",
    cpus: options.limits?.cpus ?? settings.defaultLimits.cpus,
    memoryMiB,
    pids: options.limits?.pids ?? settings.defaultLimits.pids,
    user: options.user === "root" ? "0:0" : settings.user,
    userKind: options.user,
    runtime: settings.runtime,
    lifetimeSeconds,
    expiresAt: new Date(now + lifetimeSeconds * 1000).toISOString(),
    workspace: settings.workspace,
    workspaceSizeMiB: workspaceSizeFor(memoryMiB, settings.tmpSizeMiB, settings.workspaceSizeMiB),
    tmpSizeMiB: settings.tmpSizeMiB,
    mounts: options.mounts,
    endsWithHost: !settings.keepAfterHostExit,
  };
}

/** Capabilities added for root enforcement processes: CAP_KILL unless the sandbox itself runs as root. */
export function capabilitiesAdded(policy: RequestedPolicy): string[] {
  return policy.userKind === "root" ? [] : ["KILL"];
}

/** The hardened container configuration (Engine API names) for a requested policy. */
export function buildContainerConfig(
  policy: RequestedPolicy,
  options: { session: string; metadata: Record<string, string> },
): Docker.ContainerCreateOptions {
  const [uid, gid] = policy.user.split(":");
  const labels = sandboxLabels({
    session: options.session,
    expiresAt: new Date(policy.expiresAt),
    metadata: options.metadata,
    policy: {
      egress: policy.egress,
      cpus: policy.cpus,
      memoryMiB: policy.memoryMiB,
      pids: policy.pids,
      user: policy.userKind,
      commandUser: policy.user,
      lifetimeSeconds: policy.lifetimeSeconds,
      runtime: policy.runtime ?? null,
      workspaceSizeMiB: policy.workspaceSizeMiB,
      tmpSizeMiB: policy.tmpSizeMiB,
      endsWithHost: policy.endsWithHost,
    },
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
        // The owner's labels too: the sweep removes a dangling volume only once its owner is known gone (adr/0032).
        Labels: volumeLabels(labels),
        DriverConfig: {
          Name: "local",
          Options: { type: "tmpfs", device: "tmpfs", o: `size=${policy.workspaceSizeMiB}m,uid=${uid},gid=${gid},mode=0700` },
        },
      },
    } as unknown as Docker.MountSettings,
    ...policy.mounts.map((mount) => ({
      Type: "bind" as const,
      Source: mount.hostPath,
      Target: mount.sandboxPath,
      ReadOnly: mount.readOnly,
      BindOptions: { Propagation: "rprivate" as const },
    })),
  ];
  const hostConfig: Docker.HostConfig & Record<string, unknown> = {
    NetworkMode: policy.networkMode,
    CapDrop: ["ALL"],
    // CAP_KILL for root only: the root kill helper can end sandbox-user processes. Sandboxed code (another uid,
    // no-new-privileges) never holds it. Root sandboxes get none: their commands are root too.
    CapAdd: capabilitiesAdded(policy),
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
    Ulimits: [
      { Name: "nofile", Soft: 4096, Hard: 4096 },
      { Name: "core", Soft: 0, Hard: 0 },
    ],
    ShmSize: 64 * MIB,
    IpcMode: "private",
    LogConfig: { Type: "none", Config: {} },
    RestartPolicy: { Name: "no" },
    AutoRemove: true,
  };
  if (policy.runtime) hostConfig.Runtime = policy.runtime;
  return {
    Image: policy.image,
    Entrypoint: ["sh", "-c", DEADLINE_SCRIPT, "sbx-deadline", String(policy.lifetimeSeconds), policy.endsWithHost ? "host-attached" : "detached"],
    Cmd: [],
    User: containerUserFor(policy),
    WorkingDir: policy.workspace,
    Env: [`HOME=${policy.workspace}`],
    Labels: labels,
    Tty: false,
    OpenStdin: policy.endsWithHost,
    StdinOnce: policy.endsWithHost,
    AttachStdin: policy.endsWithHost,
    AttachStdout: false,
    AttachStderr: false,
    NetworkDisabled: policy.egress === "deny",
    StopTimeout: 1,
    HostConfig: hostConfig,
  } as Docker.ContainerCreateOptions;
}
