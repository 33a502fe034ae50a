/**
 * A local Kubernetes API server emulator, so the unmodified `@kubernetes/client-node` runs offline: `/version`,
 * Namespaces (get), Pods and NetworkPolicies (create, get, list with label selectors, watch, delete;
 * `resourceVersion`; 404/409/410 `Status` objects), Events (list by `involvedObject.name`), and `pods/exec` over
 * WebSocket. Every Pod is one
 * real Docker container (see `pod-container.ts`); a NetworkPolicy selecting a Pod and denying egress puts its
 * container on no network, unless the emulator is switched to accept policies without enforcing them, as a cluster
 * whose network plugin ignores NetworkPolicy does. Not emulated: patch, admission, garbage collection.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import Docker from "dockerode";
import { WebSocketServer } from "ws";
import { cleanUpOnProcessExit, removeLabelledContainers, removeSynchronously, requireLocalImage, useOrCreateNetwork } from "@sbx/emulator-kit";
import { failureStatus, sendFailure, sendJson } from "./api-status.js";
import { chooseExecProtocol, serveExec } from "./exec-websocket.js";
import { matchesLabels, matchLabelsSelects, parseLabelSelector } from "./label-selector.js";
import { invalidLabelReason } from "./label-validation.js";
import { AlreadyExistsError, createResourceVersionClock, ObjectStore, type StoredObject } from "./object-store.js";
import { serveWatch } from "./watch-stream.js";
import { EMULATOR_INSTANCE_LABEL, EMULATOR_LABEL, startNodeContainer, startPodContainer } from "./pod-container.js";
import type { NetworkPolicyObject, PodObject } from "./pod-types.js";

export { EMULATOR_INSTANCE_LABEL, EMULATOR_LABEL } from "./pod-container.js";
export { parseLabelSelector, matchesLabels } from "./label-selector.js";

/** The Kubernetes version the emulator reports on `/version`. */
export const EMULATED_KUBERNETES_VERSION = { major: "1", minor: "31", gitVersion: "v1.31.0-sbx-kube-emulator", platform: "linux/amd64" };

/** Switchable behaviours, for the failure modes a real cluster has. */
export interface KubeEmulatorModes {
  /** `"enforced"` (default): a deny-egress policy selecting a Pod gives it no network. `"ignored"`: policies are accepted and stored but every Pod gets the network, as on a cluster whose CNI ignores NetworkPolicy. */
  networkPolicy: "enforced" | "ignored";
  /** `"normal"` (default), or `"unschedulable"`: Pods stay Pending with `PodScheduled=False` (`Unschedulable`) and a `FailedScheduling` event. */
  scheduling: "normal" | "unschedulable";
  /** `"normal"` (default: an image not present locally fails to pull, the emulator never pulls), or `"fail"`: every pull fails. */
  imagePull: "normal" | "fail";
  /** Exec subprotocols served: `"v5"` (default; v5, else v4) or `"v4"` (v4 only, as before Kubernetes 1.30). */
  execProtocols: "v5" | "v4";
}

/** Options of {@link startKubeEmulator}. */
export interface KubeEmulatorOptions {
  /** Image of the emulated node (a Python 3 image). Default `SBX_KUBE_EMULATOR_IMAGE` or `sbx-test/python:3.11`. */
  readonly image?: string;
  /** Namespaces that exist, with their labels. Default `{ sbx: {}, default: {} }`. */
  readonly namespaces?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Initial modes. */
  readonly modes?: Partial<KubeEmulatorModes>;
}

/** A running emulator. */
export interface KubeEmulator {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The bearer token every request must carry. */
  readonly token: string;
  /** A kubeconfig (JSON, which is YAML) with one context `kube-emulator` pointing at the emulator. */
  readonly kubeconfig: string;
  /** The address Pods are told the `kubernetes` Service has (the emulated node). */
  readonly nodeAddress: string;
  /** The bridge network Pods without an enforced deny policy join. */
  readonly networkName: string;
  /** The current modes; change them with `setModes`. */
  readonly modes: Readonly<KubeEmulatorModes>;
  /** Changes modes for Pods created from now on. */
  setModes(modes: Partial<KubeEmulatorModes>): void;
  /** Names of the Pods in `namespace`. */
  listPodNames(namespace: string): string[];
  /** Names of the NetworkPolicies in `namespace`. */
  listNetworkPolicyNames(namespace: string): string[];
  /** The stored Pod, as the API would return it. */
  getPod(namespace: string, name: string): PodObject | undefined;
  /** The node running the Pod vanishes: its container is removed and the Pod object with it, as the node controller would end. */
  loseNode(namespace: string, name: string): Promise<void>;
  /** API requests served so far (HTTP requests, watches and exec upgrades), for benchmarks. */
  readonly requestCount: number;
  /** Exec upgrades served so far (a subset of `requestCount`), for benchmarks. */
  readonly execCount: number;
  /** Drops every kept change, as etcd's compaction does: a watch from any earlier resourceVersion gets 410 Expired. */
  compact(): void;
  /** The next `count` watches get 410 Expired whatever their resourceVersion (to test a client's re-list). */
  expireNextWatches(count: number): void;
  /** Removes every container, the node and the network it created, and closes the server. Idempotent. */
  stop(): Promise<void>;
}

const POD_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?(?:\/(exec))?$/;
const POLICY_PATH = /^\/apis\/networking\.k8s\.io\/v1\/namespaces\/([^/]+)\/networkpolicies(?:\/([^/]+))?$/;
const NAMESPACE_PATH = /^\/api\/v1\/namespaces\/([^/]+)$/;
const EVENTS_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/events$/;

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 3 * 1024 * 1024) throw new Error("request body over 3 MiB");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function listOf(kind: string, apiVersion: string, items: StoredObject[], resourceVersion: string) {
  return { kind, apiVersion, metadata: { resourceVersion }, items };
}

/** Starts an emulator; see {@link KubeEmulator}. */
export async function startKubeEmulator(options: KubeEmulatorOptions = {}): Promise<KubeEmulator> {
  const docker = new Docker();
  const image = options.image ?? process.env.SBX_KUBE_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
  await requireLocalImage(docker, image, "kube emulator");
  const instanceId = randomBytes(5).toString("hex");
  const token = randomBytes(16).toString("hex");
  const modes: KubeEmulatorModes = { networkPolicy: "enforced", scheduling: "normal", imagePull: "normal", execProtocols: "v5", ...options.modes };
  const { networkName } = await useOrCreateNetwork(docker, {
    requested: undefined,
    name: `kube-emulator-${instanceId}`,
    labels: { [EMULATOR_LABEL]: "1", [EMULATOR_INSTANCE_LABEL]: instanceId },
  });
  const containerIds = new Set<string>();
  const unregisterCleanup = cleanUpOnProcessExit(() => removeSynchronously({ containerIds: [...containerIds], firewallRules: [], networkName }));
  let node: Awaited<ReturnType<typeof startNodeContainer>>;
  try {
    node = await startNodeContainer({ docker, image, instanceId, networkName });
    containerIds.add(node.container.id);
  } catch (error) {
    await removeLabelledContainers(docker, EMULATOR_INSTANCE_LABEL, instanceId);
    await docker
      .getNetwork(networkName)
      .remove()
      .catch(() => {});
    unregisterCleanup();
    throw error;
  }
  const clock = createResourceVersionClock();
  const pods = new ObjectStore<PodObject>(clock, "pods");
  const policies = new ObjectStore<NetworkPolicyObject>(clock, "networkpolicies");
  const events: StoredObject[] = [];
  const namespaces = options.namespaces ?? { sbx: {}, default: {} };
  const containers = new Map<string, Docker.Container>();
  const deadlines = new Map<string, NodeJS.Timeout>();
  let requestCount = 0;
  let execCount = 0;
  let watchesToExpire = 0;
  let stopped = false;

  const podKey = (namespace: string, name: string) => `${namespace}/${name}`;

  function recordEvent(pod: PodObject, reason: string, message: string, type = "Warning"): void {
    events.push({
      kind: "Event",
      apiVersion: "v1",
      metadata: { name: `${pod.metadata.name}.${randomBytes(4).toString("hex")}`, namespace: pod.metadata.namespace, resourceVersion: clock.next() },
      involvedObject: { kind: "Pod", name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
      reason,
      message,
      type,
      count: 1,
      lastTimestamp: new Date().toISOString(),
    });
  }

  function setStatus(pod: PodObject, status: Record<string, unknown>): void {
    pods.update(pod.metadata.namespace!, pod.metadata.name!, (stored) => {
      stored.status = { ...stored.status, ...status };
    });
  }

  /** Whether an enforced NetworkPolicy selecting the Pod denies all its egress (no egress rule allows anything). */
  function egressDenied(pod: PodObject): boolean {
    if (modes.networkPolicy === "ignored") return false;
    const selecting = policies
      .list(pod.metadata.namespace)
      .filter((policy) => matchLabelsSelects(policy.spec.podSelector?.matchLabels, pod.metadata.labels))
      .filter((policy) => (policy.spec.policyTypes ?? []).includes("Egress"));
    // Policies are additive: any egress rule in any selecting policy opens a path, which the emulator does not model
    // finer than "the network": the Pod then joins the bridge.
    return selecting.length > 0 && selecting.every((policy) => (policy.spec.egress ?? []).length === 0);
  }

  async function runPod(pod: PodObject): Promise<void> {
    const namespace = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    const image = pod.spec.containers[0]?.image ?? "";
    if (modes.scheduling === "unschedulable") {
      const message =
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.";
      setStatus(pod, { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message }] });
      recordEvent(pod, "FailedScheduling", message);
      return;
    }
    setStatus(pod, { phase: "Pending", hostIP: node.address, conditions: [{ type: "PodScheduled", status: "True" }] });
    const imagePresent =
      modes.imagePull === "normal" &&
      (await docker
        .getImage(image)
        .inspect()
        .then(
          () => true,
          () => false,
        ));
    if (!imagePresent) {
      const message = `Failed to pull image "${image}": rpc error: code = NotFound desc = failed to pull and unpack image "${image}": not found`;
      setStatus(pod, {
        containerStatuses: [
          { name: pod.spec.containers[0]?.name, ready: false, restartCount: 0, image, state: { waiting: { reason: "ErrImagePull", message } } },
        ],
      });
      recordEvent(pod, "Failed", message);
      return;
    }
    const networkMode = egressDenied(pod) ? "none" : networkName;
    let container: Docker.Container;
    try {
      container = await startPodContainer(pod, {
        docker,
        instanceId,
        networkMode,
        injectedEnvironment: { KUBERNETES_SERVICE_HOST: node.address, KUBERNETES_SERVICE_PORT: "443" },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      setStatus(pod, {
        containerStatuses: [
          {
            name: pod.spec.containers[0]?.name,
            ready: false,
            restartCount: 0,
            image,
            state: { waiting: { reason: "CreateContainerError", message } },
          },
        ],
      });
      recordEvent(pod, "Failed", `Error: ${message}`);
      return;
    }
    containerIds.add(container.id);
    if (stopped || !pods.get(namespace, name)) {
      await container.remove({ force: true }).catch(() => {});
      containerIds.delete(container.id);
      return;
    }
    containers.set(podKey(namespace, name), container);
    const information = await container.inspect().catch(() => undefined);
    const podIP = information?.NetworkSettings.Networks[networkName]?.IPAddress ?? "";
    const startTime = new Date().toISOString();
    setStatus(pod, {
      phase: "Running",
      podIP,
      startTime,
      conditions: [
        { type: "PodScheduled", status: "True" },
        { type: "Initialized", status: "True" },
        { type: "ContainersReady", status: "True" },
        { type: "Ready", status: "True" },
      ],
      containerStatuses: [
        { name: pod.spec.containers[0]?.name, ready: true, started: true, restartCount: 0, image, state: { running: { startedAt: startTime } } },
      ],
    });
    if (pod.spec.activeDeadlineSeconds !== undefined) {
      const timer = setTimeout(() => {
        deadlines.delete(podKey(namespace, name));
        containers.delete(podKey(namespace, name));
        void container.remove({ force: true }).catch(() => {});
        const message = `Pod was active on the node longer than the specified deadline`;
        setStatus(pod, {
          phase: "Failed",
          reason: "DeadlineExceeded",
          message,
          conditions: [{ type: "Ready", status: "False", reason: "PodFailed" }],
        });
        recordEvent(pod, "DeadlineExceeded", message);
      }, pod.spec.activeDeadlineSeconds * 1000);
      timer.unref();
      deadlines.set(podKey(namespace, name), timer);
    }
    void container.wait().then(
      (result: { StatusCode?: number }) => {
        if (!containers.has(podKey(namespace, name))) return;
        containers.delete(podKey(namespace, name));
        const exitCode = result.StatusCode ?? 137;
        setStatus(pod, {
          phase: exitCode === 0 ? "Succeeded" : "Failed",
          containerStatuses: [{ name: pod.spec.containers[0]?.name, ready: false, restartCount: 0, image, state: { terminated: { exitCode } } }],
        });
      },
      () => {},
    );
  }

  async function removePod(namespace: string, name: string): Promise<PodObject | undefined> {
    const key = podKey(namespace, name);
    const deadline = deadlines.get(key);
    if (deadline) clearTimeout(deadline);
    deadlines.delete(key);
    const container = containers.get(key);
    containers.delete(key);
    const removed = pods.delete(namespace, name);
    if (container) {
      await container.remove({ force: true }).catch(() => {});
      containerIds.delete(container.id);
    }
    return removed;
  }

  function authorized(request: IncomingMessage): boolean {
    return request.headers.authorization === `Bearer ${token}`;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    requestCount += 1;
    if (!authorized(request)) {
      sendJson(response, 401, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401,
      });
      return;
    }
    const url = new URL(request.url ?? "/", "http://emulator");
    const method = request.method ?? "GET";
    if (url.pathname === "/version" && method === "GET") return sendJson(response, 200, EMULATED_KUBERNETES_VERSION);
    const namespaceMatch = NAMESPACE_PATH.exec(url.pathname);
    if (namespaceMatch && method === "GET") {
      const name = decodeURIComponent(namespaceMatch[1]!);
      const labels = namespaces[name];
      if (!labels)
        return sendFailure(response, { code: 404, reason: "NotFound", message: `namespaces "${name}" not found`, name, kind: "namespaces" });
      return sendJson(response, 200, {
        kind: "Namespace",
        apiVersion: "v1",
        metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels }, resourceVersion: "1" },
        status: { phase: "Active" },
      });
    }
    const eventsMatch = EVENTS_PATH.exec(url.pathname);
    if (eventsMatch && method === "GET") {
      const namespace = decodeURIComponent(eventsMatch[1]!);
      const field = url.searchParams.get("fieldSelector") ?? "";
      const wanted = /^involvedObject\.name=(.+)$/.exec(field)?.[1];
      const items = events.filter(
        (event) => event.metadata.namespace === namespace && (wanted === undefined || (event.involvedObject as { name?: string }).name === wanted),
      );
      return sendJson(response, 200, listOf("EventList", "v1", items, clock.current()));
    }
    const podMatch = POD_PATH.exec(url.pathname);
    const policyMatch = POLICY_PATH.exec(url.pathname);
    const match = podMatch ?? policyMatch;
    if (!match || (podMatch && podMatch[3]))
      return sendFailure(response, { code: 404, reason: "NotFound", message: "the server could not find the requested resource" });
    const namespace = decodeURIComponent(match[1]!);
    const name = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    if (!namespaces[namespace])
      return sendFailure(response, {
        code: 404,
        reason: "NotFound",
        message: `namespaces "${namespace}" not found`,
        name: namespace,
        kind: "namespaces",
      });
    const store = podMatch ? pods : policies;
    const kind = podMatch ? "Pod" : "NetworkPolicy";
    const apiVersion = podMatch ? "v1" : "networking.k8s.io/v1";
    // Status details name the API group of a non-core kind, as the real server's do.
    const group = podMatch ? undefined : "networking.k8s.io";
    if (name === undefined && method === "GET") {
      let requirements;
      try {
        requirements = parseLabelSelector(url.searchParams.get("labelSelector"));
      } catch (error) {
        return sendFailure(response, { code: 400, reason: "BadRequest", message: (error as Error).message });
      }
      if (url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1") {
        const forceExpired = watchesToExpire > 0;
        if (forceExpired) watchesToExpire -= 1;
        const watch = {
          namespace,
          requirements,
          resourceVersion: url.searchParams.get("resourceVersion"),
          timeoutSeconds: url.searchParams.get("timeoutSeconds"),
          forceExpired,
        };
        if (podMatch) serveWatch(response, pods, watch);
        else serveWatch(response, policies, watch);
        return;
      }
      const items = store.list(namespace).filter((object) => matchesLabels(requirements, object.metadata.labels));
      return sendJson(response, 200, listOf(`${kind}List`, apiVersion, items, clock.current()));
    }
    if (name === undefined && method === "POST") {
      let body: StoredObject;
      try {
        body = (await readJson(request)) as StoredObject;
      } catch (error) {
        return sendFailure(response, { code: 400, reason: "BadRequest", message: (error as Error).message });
      }
      if (!body || typeof body !== "object" || typeof body.metadata !== "object" || body.metadata === null)
        return sendFailure(response, { code: 422, reason: "Invalid", message: `${kind} is invalid: metadata: Required value` });
      const labelProblem = invalidLabelReason(body.metadata.labels);
      if (labelProblem)
        return sendFailure(response, {
          code: 422,
          reason: "Invalid",
          message: `${kind} "${String(body.metadata.name)}" is invalid: ${labelProblem}`,
        });
      if (podMatch && !Array.isArray((body as PodObject).spec?.containers))
        return sendFailure(response, { code: 422, reason: "Invalid", message: "Pod is invalid: spec.containers: Required value" });
      try {
        const created = store.create(namespace, { ...body, kind, apiVersion, ...(podMatch ? { status: { phase: "Pending" } } : {}) } as PodObject &
          NetworkPolicyObject);
        if (podMatch) void runPod(created as PodObject).catch(() => {});
        return sendJson(response, 201, created);
      } catch (error) {
        if (error instanceof AlreadyExistsError)
          return sendFailure(response, {
            code: 409,
            reason: "AlreadyExists",
            message: error.message,
            name: body.metadata.name,
            kind: store.resource,
            group,
          });
        throw error;
      }
    }
    if (name !== undefined && method === "GET") {
      const object = store.get(namespace, name);
      if (!object)
        return sendFailure(response, {
          code: 404,
          reason: "NotFound",
          message: `${store.resource} "${name}" not found`,
          name,
          kind: store.resource,
          group,
        });
      return sendJson(response, 200, object);
    }
    if (name !== undefined && method === "DELETE") {
      const removed = podMatch ? await removePod(namespace, name) : policies.delete(namespace, name);
      if (!removed)
        return sendFailure(response, {
          code: 404,
          reason: "NotFound",
          message: `${store.resource} "${name}" not found`,
          name,
          kind: store.resource,
          group,
        });
      return sendJson(response, 200, removed);
    }
    return sendFailure(response, {
      code: 405,
      reason: "MethodNotAllowed",
      message: `the server does not allow this method on the requested resource`,
    });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, { ...failureStatus({ code: 500, reason: "BadRequest", message: String(error) }), reason: "InternalError" });
      else response.destroy();
    });
  });
  const webSockets = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => chooseExecProtocol(offered, modes.execProtocols === "v5") ?? false,
  });
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    requestCount += 1;
    execCount += 1;
    socket.on("error", () => {});
    const refuse = (code: number, text: string) => {
      socket.end(`HTTP/1.1 ${code} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    };
    if (!authorized(request)) return refuse(401, "Unauthorized");
    const url = new URL(request.url ?? "/", "http://emulator");
    const match = POD_PATH.exec(url.pathname);
    if (!match || match[3] !== "exec" || match[2] === undefined) return refuse(404, "Not Found");
    const namespace = decodeURIComponent(match[1]!);
    const name = decodeURIComponent(match[2]);
    const pod = pods.get(namespace, name);
    const container = containers.get(podKey(namespace, name));
    if (!pod) return refuse(404, "Not Found");
    if (!container) return refuse(400, "Bad Request");
    const command = url.searchParams.getAll("command");
    if (command.length === 0) return refuse(400, "Bad Request");
    const stdin = url.searchParams.get("stdin") === "true";
    webSockets.handleUpgrade(request, socket, head, (webSocket) => {
      void serveExec(webSocket, { container, command, stdin, podAlive: () => containers.get(podKey(namespace, name)) === container }).catch(() =>
        webSocket.terminate(),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    // Plain HTTP on loopback: client-node refuses http:// unless the cluster skips TLS verification.
    clusters: [{ name: "kube-emulator", cluster: { server: url, "insecure-skip-tls-verify": true } }],
    users: [{ name: "kube-emulator", user: { token } }],
    contexts: [{ name: "kube-emulator", context: { cluster: "kube-emulator", user: "kube-emulator", namespace: "sbx" } }],
    "current-context": "kube-emulator",
  });
  let stopping: Promise<void> | undefined;
  return {
    url,
    token,
    kubeconfig,
    nodeAddress: node.address,
    networkName,
    modes,
    setModes: (changes) => Object.assign(modes, changes),
    listPodNames: (namespace) => pods.list(namespace).map((pod) => pod.metadata.name!),
    listNetworkPolicyNames: (namespace) => policies.list(namespace).map((policy) => policy.metadata.name!),
    getPod: (namespace, name) => pods.get(namespace, name),
    loseNode: async (namespace, name) => {
      await removePod(namespace, name);
    },
    get requestCount() {
      return requestCount;
    },
    get execCount() {
      return execCount;
    },
    compact: () => {
      pods.compact();
      policies.compact();
    },
    expireNextWatches: (count) => {
      watchesToExpire = count;
    },
    stop: () => {
      stopping ??= (async () => {
        stopped = true;
        for (const timer of deadlines.values()) clearTimeout(timer);
        for (const client of webSockets.clients) client.terminate();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await removeLabelledContainers(docker, EMULATOR_INSTANCE_LABEL, instanceId);
        await docker
          .getNetwork(networkName)
          .remove()
          .catch(() => {});
        unregisterCleanup();
      })();
      return stopping;
    },
  };
}
