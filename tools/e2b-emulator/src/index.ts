/**
 * A local server speaking E2B's wire protocol (control plane, envd, code
 * interpreter) so the unmodified `e2b` and `@e2b/code-interpreter` SDKs run
 * offline. Every emulated sandbox is a real container on the local Docker Engine.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Docker from "dockerode";
import {
  cleanUpOnProcessExit,
  removeLabelledContainers,
  removeSynchronously,
  requireLocalImage,
  useOrCreateNetwork,
  WarmContainerPool,
} from "@sbx/emulator-kit";
import { handleControlPlaneRequest, sendApiError } from "./control-plane.js";
import { ContainerSandbox, EMULATOR_INSTANCE_LABEL, EMULATOR_LABEL, randomIdentifier, WARM_CONTAINER_MAX_AGE_MS } from "./container-sandbox.js";
import type { PreparedContainer } from "./sandbox-container.js";
import { handleSandboxRequest } from "./sandbox-router.js";
import { describeFirewallRule } from "./network-policy.js";

export { EMULATED_ENVD_VERSION, EMULATOR_LABEL, EMULATOR_INSTANCE_LABEL, SANDBOX_ID_LABEL } from "./container-sandbox.js";
export type { SandboxEnforcementReport } from "./container-sandbox.js";
export type { NetworkPolicyPlan } from "./network-policy.js";

/** Options of {@link startE2BEmulator}. */
export interface E2BEmulatorOptions {
  /** Image every emulated sandbox runs. Default process.env.SBX_E2B_EMULATOR_IMAGE ?? "sbx-test/python:3.11". */
  image?: string;
  /** Docker network (created by the caller) that sandboxes with internet access join. Default: the emulator creates its own bridge network and removes it on stop(). */
  network?: string;
  /** Port on 127.0.0.1; default 0 (any free port). */
  port?: number;
  /** Maximum sandbox lifetime in seconds, to emulate an account tier cap (E2B's hobby tier is 3600). Requests above are cut to this, like the real service. Default 3600. */
  maxTimeoutSeconds?: number;
}

/** A running emulator. */
export interface E2BEmulator {
  /** http://127.0.0.1:PORT — set as both E2B_API_URL/apiUrl and E2B_SANDBOX_URL/sandboxUrl. */
  readonly url: string;
  /** A key that passes the SDK's format check, e.g. "e2b_" + 40 hex zeros. */
  readonly apiKey: string;
  /** Connection options to spread into Sandbox.create / connect: { apiKey, apiUrl, sandboxUrl } */
  readonly connectionOptions: { apiKey: string; apiUrl: string; sandboxUrl: string };
  /** The Docker network used for internet-allowed sandboxes. */
  readonly networkName: string;
  /** Ids of live emulated sandboxes. */
  listSandboxIds(): string[];
  /** Kills every sandbox container, closes the server, removes the network it created. Idempotent. */
  stop(): Promise<void>;
}

/** The API key every emulator accepts (passes e2b@2.45's `/^e2b_[0-9a-f]+$/` check). */
export const EMULATOR_API_KEY = "e2b_" + "0".repeat(40);

/** Starts an emulator; see {@link E2BEmulator}. */
export async function startE2BEmulator(options: E2BEmulatorOptions = {}): Promise<E2BEmulator> {
  const docker = new Docker();
  const image = options.image ?? process.env.SBX_E2B_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
  await requireLocalImage(docker, image, "E2B emulator");
  const instanceId = randomIdentifier(10);
  const maxTimeoutSeconds = options.maxTimeoutSeconds ?? 3600;
  const { networkName, ownsNetwork } = await useOrCreateNetwork(docker, {
    requested: options.network,
    name: `e2b-emulator-${instanceId}`,
    labels: { [EMULATOR_LABEL]: "1", [EMULATOR_INSTANCE_LABEL]: instanceId },
  });

  const sandboxes = new Map<string, ContainerSandbox>();
  let accepting = true;
  const warmContainers = new WarmContainerPool<PreparedContainer>({
    maxAgeMs: WARM_CONTAINER_MAX_AGE_MS,
    discard: (prepared) => prepared.container.remove({ force: true }).then(() => undefined),
  });
  const context = {
    warmContainers,
    docker,
    image,
    instanceId,
    networkName,
    apiKey: EMULATOR_API_KEY,
    maxTimeoutSeconds,
    sandboxes,
    accepting: () => accepting,
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const url = new URL(request.url ?? "/", "http://emulator");
      const sandboxId = request.headers["e2b-sandbox-id"];
      if (typeof sandboxId === "string" && sandboxId) {
        await handleSandboxRequest(sandboxes, sandboxId, url, request, response);
        return;
      }
      const handled = await handleControlPlaneRequest(context, url, request, response);
      if (!handled) sendApiError(response, 404, `no route ${request.method} ${url.pathname}`);
    })().catch((error: unknown) => {
      if (!response.headersSent) sendApiError(response, 500, error instanceof Error ? error.message : String(error));
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${address.port}`;

  // Best effort for process exit: no event loop left, so the docker and iptables CLIs remove what is still there.
  const forgetExitCleanup = cleanUpOnProcessExit(() =>
    removeSynchronously({
      containerIds: [...sandboxes.values()].map((sandbox) => sandbox.containerId),
      firewallRules: [...sandboxes.values()].flatMap((sandbox) => sandbox.firewallRules),
      networkName: ownsNetwork ? networkName : undefined,
    }),
  );
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      accepting = false;
      forgetExitCleanup();
      await Promise.all([...sandboxes.values()].map((sandbox) => sandbox.kill()).concat(warmContainers.close()));
      // Anything left behind by this instance (e.g. a create racing with stop).
      await removeLabelledContainers(docker, EMULATOR_INSTANCE_LABEL, instanceId);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownsNetwork)
        await docker
          .getNetwork(networkName)
          .remove()
          .catch(() => undefined);
    })();
    return stopping;
  };

  return {
    url,
    apiKey: EMULATOR_API_KEY,
    connectionOptions: { apiKey: EMULATOR_API_KEY, apiUrl: url, sandboxUrl: url },
    networkName,
    listSandboxIds: () => [...sandboxes.keys()],
    stop,
  };
}

/** Renders an installed firewall rule as an iptables command line (for logs). */
export { describeFirewallRule };
