import type Docker from "dockerode";
import { scrubHostPaths } from "../map-docker-error.js";
import type { EngineEndpoint, ResolvedDockerSettings } from "../docker-settings.js";
import { openEgressSocket, type EgressSocket } from "./egress-socket.js";

/**
 * Why the Unix-socket transport (adr/0027) cannot be offered to a new sandbox, or undefined when it can: it needs the
 * engine to mount a directory of this host (a local engine on Linux), and a forwarder uid other than the sandbox
 * user's (the forwarder runs as this process's uid, the owner of the 0700 socket directory). A Docker Desktop VM or
 * a runtime without host Unix sockets (gVisor) is found by the probe at create instead.
 */
export function socketTransportUnavailable(endpoint: EngineEndpoint, settings: ResolvedDockerSettings, commandUser: string): string | undefined {
  if (settings.egressTransport === "exec") return 'settings.egressTransport is "exec"';
  if (endpoint.kind !== "socket")
    return `the engine is remote (tcp://${endpoint.host}:${endpoint.port}), so it cannot mount a directory of this host`;
  if (process.platform !== "linux" || typeof process.getuid !== "function")
    return `the host is ${process.platform}, where the engine runs in a VM that cannot reach this host's Unix sockets`;
  // A root sandbox may reach the socket (and kill the forwarder) anyway: it meets the same proxy and allowlist.
  const commandUid = commandUser.split(":")[0];
  if (commandUid !== "0" && String(process.getuid()) === commandUid)
    return `this process runs as uid ${process.getuid()}, the sandbox user's uid, which must not reach the socket directly`;
  return undefined;
}

/** The `uid:gid` the forwarder runs as with the Unix-socket transport: this process's, the socket directory's owner. */
export function socketForwarderUser(): string {
  return `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
}

/** True for an engine error that says it could not set up a bind mount (the socket directory), e.g. Docker Desktop's "Mounts denied". */
export function isMountRefusal(message: string): boolean {
  return /mounts? denied|bind source path does not exist|invalid mount config|error while creating mount source path/i.test(message);
}

/** The transport chosen for one allowlisted sandbox at create: the socket offered (if any), or why not. */
export interface EgressTransportPlan {
  /** The host end, mounted into the container; undefined when only the exec stream is possible. */
  readonly socket: EgressSocket | undefined;
  /** Why the socket is not offered (for the audit). */
  readonly unavailableReason: string | undefined;
  /** The forwarder's `uid:gid` with the socket. */
  readonly socketUser: string;
  /** Runs the container create; an engine that refuses the socket's mount gets one retry without it (exec stream). */
  create<Result>(createContainer: () => Promise<Result>, messageOf: (error: unknown) => string): Promise<Result>;
  /** Removes the socket directory (a failed create). Idempotent. */
  close(): void;
}

/** Decides the transport for a new allowlisted sandbox and, when a socket is offered, adds its mount to `config`. */
export async function planEgressTransport(options: {
  endpoint: EngineEndpoint;
  settings: ResolvedDockerSettings;
  commandUser: string;
  config: Docker.ContainerCreateOptions;
}): Promise<EgressTransportPlan> {
  let unavailableReason = socketTransportUnavailable(options.endpoint, options.settings, options.commandUser);
  let socket = unavailableReason === undefined ? await openEgressSocket() : undefined;
  const hostConfig = options.config.HostConfig as Docker.HostConfig & { Mounts: Docker.MountSettings[] };
  if (socket) hostConfig.Mounts = [...(hostConfig.Mounts ?? []), socket.mount];
  return {
    get socket() {
      return socket;
    },
    get unavailableReason() {
      return unavailableReason;
    },
    socketUser: socketForwarderUser(),
    async create(createContainer, messageOf) {
      try {
        return await createContainer();
      } catch (error) {
        // An engine that cannot mount the directory (Docker Desktop's file sharing): the exec stream instead.
        if (!socket || !isMountRefusal(messageOf(error))) throw error;
        const refused = socket;
        hostConfig.Mounts = hostConfig.Mounts.filter((mount) => mount !== refused.mount);
        refused.close();
        socket = undefined;
        unavailableReason = `the engine refused to mount the socket directory (${scrubHostPaths(messageOf(error))})`;
        return await createContainer();
      }
    },
    close() {
      socket?.close();
    },
  };
}
