/**
 * One real Docker container per Pod: the Pod's first container's image, command, user, read-only root, dropped
 * capabilities, no-new-privileges, CPU and memory limits, and its emptyDir volumes as sized tmpfs mounts (mode 0777,
 * as the kubelet makes an emptyDir). The network is decided by the caller (NetworkPolicy enforcement).
 */
import type Docker from "dockerode";
import { runExec } from "@sbx/emulator-kit";
import { parseByteQuantity, parseCpuQuantity, type PodObject } from "./pod-types.js";

/** Label on every container the emulator creates, and the instance label (for cleanup). */
export const EMULATOR_LABEL = "sbx.kube-emulator";
/** Label carrying the emulator instance id. */
export const EMULATOR_INSTANCE_LABEL = "sbx.kube-emulator.instance";

/** Default emptyDir size when the Pod gives none (the kubelet's is the node's free disk; a tmpfs needs a bound). */
const DEFAULT_EMPTY_DIR_BYTES = 1024 ** 3;

/** What the container needs besides the Pod. */
export interface PodContainerOptions {
  readonly docker: Docker;
  readonly instanceId: string;
  /** `"none"`, or the emulator's bridge network when no enforced policy denies egress. */
  readonly networkMode: string;
  /** Variables the kubelet always injects (`KUBERNETES_SERVICE_HOST`/`PORT`). */
  readonly injectedEnvironment: Readonly<Record<string, string>>;
}

/** Creates and starts the Pod's container; returns it. */
export async function startPodContainer(pod: PodObject, options: PodContainerOptions): Promise<Docker.Container> {
  const spec = pod.spec.containers[0]!;
  const podSecurity = pod.spec.securityContext ?? {};
  const security = spec.securityContext ?? {};
  const runAsUser = security.runAsUser ?? podSecurity.runAsUser;
  const runAsGroup = security.runAsGroup ?? podSecurity.runAsGroup ?? podSecurity.fsGroup;
  const user = runAsUser === undefined ? undefined : runAsGroup === undefined ? String(runAsUser) : `${runAsUser}:${runAsGroup}`;
  const tmpfs: Record<string, string> = {};
  for (const mount of spec.volumeMounts ?? []) {
    const volume = pod.spec.volumes?.find((candidate) => candidate.name === mount.name);
    if (!volume?.emptyDir) continue;
    const bytes = parseByteQuantity(volume.emptyDir.sizeLimit) ?? DEFAULT_EMPTY_DIR_BYTES;
    tmpfs[mount.mountPath] = `rw,exec,nosuid,nodev,size=${bytes},mode=0777`;
  }
  const memory = parseByteQuantity(spec.resources?.limits?.memory);
  const cpus = parseCpuQuantity(spec.resources?.limits?.cpu);
  const environment = { ...options.injectedEnvironment };
  for (const variable of spec.env ?? []) environment[variable.name] = variable.value ?? "";
  const command = [...(spec.command ?? []), ...(spec.args ?? [])];
  const container = await options.docker.createContainer({
    name: `kube-emulator-${options.instanceId}-${pod.metadata.namespace}-${pod.metadata.name}`,
    Image: spec.image,
    Cmd: command.length > 0 ? command : undefined,
    Entrypoint: spec.command ? [] : undefined,
    User: user,
    WorkingDir: spec.workingDir,
    Env: Object.entries(environment).map(([name, value]) => `${name}=${value}`),
    Labels: {
      [EMULATOR_LABEL]: "1",
      [EMULATOR_INSTANCE_LABEL]: options.instanceId,
      "sbx.kube-emulator.pod": `${pod.metadata.namespace}/${pod.metadata.name}`,
    },
    HostConfig: {
      NetworkMode: options.networkMode,
      ReadonlyRootfs: security.readOnlyRootFilesystem === true,
      CapDrop: security.capabilities?.drop,
      CapAdd: security.capabilities?.add,
      Privileged: security.privileged === true,
      SecurityOpt: security.allowPrivilegeEscalation === false ? ["no-new-privileges:true"] : [],
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: cpus === undefined ? undefined : Math.round(cpus * 1e9),
      Tmpfs: tmpfs,
      Init: false,
    },
  });
  try {
    await container.start();
    // Docker creates the working directory over the tmpfs with mode 0755 root; the kubelet makes an emptyDir 0777.
    const mountPaths = Object.keys(tmpfs);
    if (mountPaths.length > 0) {
      const fixed = await runExec(container, { command: ["chmod", "0777", ...mountPaths], user: "0" });
      if (fixed.exitCode !== 0) throw new Error(`kube emulator: could not set emptyDir modes: ${fixed.stderr.toString("utf8")}`);
    }
  } catch (error) {
    await container.remove({ force: true }).catch(() => {});
    throw error;
  }
  return container;
}

/**
 * The emulated node: a container on the emulator's network listening on 443 (the `kubernetes` Service address every
 * Pod is told about) and 10250 (the kubelet port at the Pod's `hostIP`), so a Pod whose egress is not blocked can
 * reach both, and the adapter's create-time probe sees it. It answers nothing; it accepts and closes.
 */
export async function startNodeContainer(options: { docker: Docker; image: string; instanceId: string; networkName: string }): Promise<{
  container: Docker.Container;
  address: string;
}> {
  const listener = [
    "import socket, threading",
    "def serve(port):",
    "    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
    "    server.bind(('0.0.0.0', port)); server.listen(64)",
    "    while True:",
    "        connection, _ = server.accept(); connection.close()",
    "threads = [threading.Thread(target=serve, args=(port,), daemon=True) for port in (443, 10250)]",
    "[thread.start() for thread in threads]",
    "threading.Event().wait()",
  ].join("\n");
  const container = await options.docker.createContainer({
    name: `kube-emulator-${options.instanceId}-node`,
    Image: options.image,
    Entrypoint: [],
    Cmd: ["python3", "-c", listener],
    User: "0",
    Labels: { [EMULATOR_LABEL]: "1", [EMULATOR_INSTANCE_LABEL]: options.instanceId },
    HostConfig: { NetworkMode: options.networkName },
  });
  await container.start();
  const information = await container.inspect();
  const address = information.NetworkSettings.Networks[options.networkName]?.IPAddress;
  if (!address) throw new Error("kube emulator: the node container got no address");
  return { container, address };
}
