/**
 * A local gRPC server speaking the wire protocol of Modal's JS SDK (`modal@0.11.1`) for Sandboxes, so the unmodified
 * SDK runs offline: the control plane (`modal.client.ModalClient`) and the task command router
 * (`modal.task_command_router.TaskCommandRouter`) on one plaintext HTTP/2 port on 127.0.0.1. Point the SDK at it with
 * `MODAL_SERVER_URL=http://127.0.0.1:<port>` and the emulator's token id and secret. Every emulated sandbox is a real
 * container on the local Docker Engine; commands never run on the host.
 */
import { randomBytes } from "node:crypto";
import Docker from "dockerode";
import {
  cleanUpOnProcessExit,
  removeLabelledContainers,
  removeSynchronously,
  requireLocalImage,
  useOrCreateNetwork,
  WarmContainerPool,
} from "@sbx/emulator-kit";
import { createServer } from "nice-grpc";
import { controlPlaneHandlers } from "./control-plane.js";
import {
  EMULATOR_INSTANCE_LABEL,
  EMULATOR_LABEL,
  RESULT_STATUS,
  WARM_CONTAINER_MAX_AGE_MS,
  type EmulatedSandbox,
  type SandboxEnforcementReport,
} from "./emulated-sandbox.js";
import type { PreparedContainer } from "./sandbox-container.js";
import type { EmulatorState } from "./emulator-state.js";
import { jwtLikeToken, withUnimplementedStubs } from "./grpc-service.js";
import { loadModalDefinitions, MODAL_SDK_VERSION } from "./modal-definitions.js";
import { taskCommandRouterHandlers } from "./task-command-router.js";
import { createImageStore, removeSnapshotImages, usableSnapshotImage } from "./image-store.js";

export { EMULATOR_LABEL, EMULATOR_INSTANCE_LABEL, RESULT_STATUS, type SandboxEnforcementReport } from "./emulated-sandbox.js";
export { MAX_TIMEOUT_SECONDS } from "./control-plane.js";
export { FS_TOOLS_PATH } from "./fs-tools-script.js";
export { MODAL_SDK_VERSION } from "./modal-definitions.js";
export type { EmulatorNetworkPlan } from "./network-policy.js";

/** Options of {@link startModalEmulator}. */
export interface ModalEmulatorOptions {
  /** Image every sandbox runs (whatever registry tag the SDK asks for; the tag is recorded). Default `SBX_MODAL_EMULATOR_IMAGE` or `sbx-test/python:3.11`. It needs /bin/sh and python3 (for the filesystem tool). */
  readonly image?: string;
  /** Docker network (created by the caller) that sandboxes with network access join. Default: one the emulator creates and removes. */
  readonly network?: string;
  /** Port on 127.0.0.1. Default 0 (any free port). */
  readonly port?: number;
}

/** A running emulator. */
export interface ModalEmulator {
  /** `http://127.0.0.1:<port>`: the value for `MODAL_SERVER_URL`. */
  readonly serverUrl: string;
  /** The token id the emulator accepts. */
  readonly tokenId: string;
  /** The token secret the emulator accepts. */
  readonly tokenSecret: string;
  /** The Docker network sandboxes with network access join. */
  readonly networkName: string;
  /** The `modal` SDK version whose wire format is served. */
  readonly sdkVersion: string;
  /** Ids of sandboxes that have not finished. */
  listSandboxIds(): string[];
  /** What a sandbox asked for and what the emulator enforces (network plan, firewall rules, Docker limits, result). */
  inspectSandbox(sandboxId: string): SandboxEnforcementReport | undefined;
  /**
   * Terminates a sandbox behind the client's back, as another client or Modal's dashboard would: its container is
   * removed, in-flight execs end, and later calls see a finished sandbox. Rejects for an unknown id.
   */
  terminateSandbox(sandboxId: string): Promise<void>;
  /**
   * The Docker image behind an image id made by a filesystem snapshot (`TaskSnapshotFilesystem`, ADR 0062), while it
   * can be used; undefined for any other id, and once deleted or expired. For tests that read what the emulator stores.
   */
  snapshotDockerImage(imageId: string): string | undefined;
  /** Ends every sandbox (removing its container), closes the server and removes the network it created (and the snapshot images). Idempotent. */
  stop(): Promise<void>;
}

/** Starts an emulator; see {@link ModalEmulator}. Throws when Docker or the image is unavailable. */
export async function startModalEmulator(options: ModalEmulatorOptions = {}): Promise<ModalEmulator> {
  const definitions = loadModalDefinitions();
  const docker = new Docker();
  const image = options.image ?? process.env.SBX_MODAL_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
  await requireLocalImage(docker, image, "Modal emulator");
  const instanceId = randomBytes(5).toString("hex");
  const { networkName, ownsNetwork } = await useOrCreateNetwork(docker, {
    requested: options.network,
    name: `modal-emulator-${instanceId}`,
    labels: { [EMULATOR_LABEL]: "1", [EMULATOR_INSTANCE_LABEL]: instanceId },
  });

  let accepting = true;
  let port = 0;
  const routerJwt = jwtLikeToken("modal-emulator-task-router");
  const state: EmulatorState = {
    docker,
    image,
    instanceId,
    networkName,
    credentials: { tokenId: `ak-emulator-${instanceId}`, tokenSecret: `as-emulator-${randomBytes(12).toString("hex")}` },
    authTokens: new Set(),
    routerJwt,
    apps: new Map(),
    images: new Map(),
    imageStore: createImageStore(),
    secrets: new Map(),
    sandboxes: new Map<string, EmulatedSandbox>(),
    routerAccess: () => ({ jwt: routerJwt, url: `https://127.0.0.1:${port}` }),
    accepting: () => accepting,
    warmContainers: new WarmContainerPool<PreparedContainer>({
      maxAgeMs: WARM_CONTAINER_MAX_AGE_MS,
      discard: (prepared) => prepared.container.remove({ force: true }).then(() => undefined),
    }),
  };

  const server = createServer({ "grpc.max_receive_message_length": 100 * 1024 * 1024, "grpc.max_send_message_length": 100 * 1024 * 1024 });
  server.add(definitions.controlPlane as never, withUnimplementedStubs(definitions.controlPlane, controlPlaneHandlers(state)) as never);
  server.add(
    definitions.taskCommandRouter as never,
    withUnimplementedStubs(definitions.taskCommandRouter, taskCommandRouterHandlers(state)) as never,
  );
  port = await server.listen(`127.0.0.1:${options.port ?? 0}`);

  let stopping: Promise<void> | undefined;
  // Best effort for process exit: no event loop left, so the docker and iptables CLIs remove what is still there.
  const forgetExitCleanup = cleanUpOnProcessExit(() =>
    removeSynchronously({
      containerIds: [...state.sandboxes.values()].map((sandbox) => sandbox.containerId),
      firewallRules: [...state.sandboxes.values()].flatMap((sandbox) => sandbox.firewallRules),
      networkName: ownsNetwork ? networkName : undefined,
    }),
  );

  return {
    serverUrl: `http://127.0.0.1:${port}`,
    tokenId: state.credentials.tokenId,
    tokenSecret: state.credentials.tokenSecret,
    networkName,
    sdkVersion: definitions.sdkVersion ?? MODAL_SDK_VERSION,
    listSandboxIds: () => [...state.sandboxes.values()].filter((sandbox) => !sandbox.finished).map((sandbox) => sandbox.id),
    inspectSandbox: (sandboxId) => state.sandboxes.get(sandboxId)?.report(),
    snapshotDockerImage: (imageId) => usableSnapshotImage(state, imageId)?.dockerImage,
    async terminateSandbox(sandboxId) {
      const sandbox = state.sandboxes.get(sandboxId);
      if (!sandbox) throw new Error(`the Modal emulator has no sandbox ${sandboxId}`);
      await sandbox.end({ status: RESULT_STATUS.TERMINATED, exception: "Sandbox terminated" });
    },
    stop() {
      if (!stopping) {
        stopping = (async () => {
          accepting = false;
          forgetExitCleanup();
          await Promise.all(
            [...state.sandboxes.values()]
              .map((sandbox) => sandbox.end({ status: RESULT_STATUS.TERMINATED, exception: "emulator stopped" }))
              .concat(state.warmContainers?.close() ?? []),
          );
          await removeLabelledContainers(docker, EMULATOR_INSTANCE_LABEL, instanceId);
          await removeSnapshotImages(state);
          server.forceShutdown();
          if (ownsNetwork)
            await docker
              .getNetwork(networkName)
              .remove()
              .catch(() => undefined);
        })();
      }
      return stopping;
    },
  };
}
