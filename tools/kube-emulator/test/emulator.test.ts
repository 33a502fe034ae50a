/**
 * The emulator through the unmodified `@kubernetes/client-node`: the REST shapes (version, namespace, Pods and
 * NetworkPolicies with label selectors, 404/409 Status objects), exec over v5 and v4 with exit codes and stdin close,
 * and the modes (policy enforced or ignored, unschedulable, image pull failure, activeDeadlineSeconds).
 */
import { PassThrough, Writable } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, NetworkingV1Api, VersionApi, type V1Pod, type V1Status } from "@kubernetes/client-node";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { describe, expect, it } from "vitest";
import { startKubeEmulator, type KubeEmulator } from "../src/index.js";

const shared = shareEmulator({ start: () => startKubeEmulator(), backend: "k8s", label: "kube-emulator" });

function clients(emulator: KubeEmulator) {
  const config = new KubeConfig();
  config.loadFromString(emulator.kubeconfig);
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    networking: config.makeApiClient(NetworkingV1Api),
    version: config.makeApiClient(VersionApi),
  };
}

function sleeperPod(name: string, labels: Record<string, string>, extra: Partial<V1Pod["spec"]> = {}): V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      restartPolicy: "Never",
      containers: [
        {
          name: "sandbox",
          image: "sbx-test/python:3.11",
          command: ["python3", "-c", "import signal, time\nsignal.signal(signal.SIGTERM, lambda *a: exit(0))\nwhile True: time.sleep(3600)"],
          securityContext: {
            runAsUser: 1000,
            runAsGroup: 1000,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
            readOnlyRootFilesystem: true,
          },
          volumeMounts: [{ name: "workspace", mountPath: "/workspace" }],
        },
      ],
      volumes: [{ name: "workspace", emptyDir: { sizeLimit: "64Mi" } }],
      ...extra,
    },
  };
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() - started > timeoutMs) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function runExec(emulator: KubeEmulator, pod: string, command: string[], input?: string) {
  const { config } = clients(emulator);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const sink = (into: Buffer[]) => new Writable({ write: (chunk: Buffer, _encoding, callback) => (into.push(chunk), callback()) });
  const stdin = input === undefined ? null : new PassThrough();
  let status: V1Status | undefined;
  const socket = await new Exec(config).exec(
    "sbx",
    pod,
    "sandbox",
    command,
    sink(stdout),
    sink(stderr),
    stdin,
    false,
    (received) => (status = received),
  );
  if (stdin) stdin.end(input);
  await new Promise<void>((resolve) => socket.on("close", () => resolve()));
  return { stdout: Buffer.concat(stdout).toString(), stderr: Buffer.concat(stderr).toString(), status, protocol: socket.protocol };
}

describe("kube emulator", () => {
  it("serves /version, namespaces, and 404 Status objects", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const { core, version } = clients(shared.emulator);
    expect((await version.getCode()).gitVersion).toMatch(/^v1\.31/);
    expect((await core.readNamespace({ name: "sbx" })).metadata?.name).toBe("sbx");
    const error = (await core.readNamespacedPod({ namespace: "sbx", name: "missing" }).catch((caught: unknown) => caught)) as {
      code?: number;
      body?: string;
    };
    expect(error.code).toBe(404);
    expect(JSON.parse(error.body!)).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });

  it("refuses a Pod whose labels Kubernetes refuses with a 422 Invalid Status", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const { core } = clients(shared.emulator);
    const refused: Array<Record<string, string>> = [
      { "metadata.sbx.dev/note": "has spaces" },
      { "metadata.sbx.dev/bad key": "x" },
      { "Upper.Prefix/ok": "x" },
      { ok: "v".repeat(64) },
    ];
    for (const labels of refused) {
      const error = (await core
        .createNamespacedPod({ namespace: "sbx", body: sleeperPod("invalid-labels", labels) })
        .catch((caught: unknown) => caught)) as {
        code?: number;
        body?: string;
      };
      expect(error.code).toBe(422);
      expect(JSON.parse(error.body!)).toMatchObject({ kind: "Status", reason: "Invalid", code: 422 });
    }
    expect((await core.listNamespacedPod({ namespace: "sbx" })).items.map((pod) => pod.metadata?.name)).not.toContain("invalid-labels");
  });

  it("runs a Pod as a container, lists by label, refuses a duplicate with 409, execs over v5 with stdin close and exit codes", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const emulator = shared.emulator;
    const { core, networking } = clients(emulator);
    await networking.createNamespacedNetworkPolicy({
      namespace: "sbx",
      body: {
        metadata: { name: "deny-a" },
        spec: { podSelector: { matchLabels: { case: "a" } }, policyTypes: ["Ingress", "Egress"], ingress: [], egress: [] },
      },
    });
    const created = await core.createNamespacedPod({ namespace: "sbx", body: sleeperPod("pod-a", { case: "a" }) });
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(1000);
    const duplicate = (await core
      .createNamespacedPod({ namespace: "sbx", body: sleeperPod("pod-a", { case: "a" }) })
      .catch((caught: unknown) => caught)) as { code?: number };
    expect(duplicate.code).toBe(409);
    const running = await waitFor(
      () => core.readNamespacedPod({ namespace: "sbx", name: "pod-a" }),
      (pod) => pod.status?.phase === "Running",
    );
    expect(running.status?.phase).toBe("Running");
    expect((await core.listNamespacedPod({ namespace: "sbx", labelSelector: "case=a" })).items.map((pod) => pod.metadata?.name)).toEqual(["pod-a"]);
    expect((await core.listNamespacedPod({ namespace: "sbx", labelSelector: "case=b" })).items).toEqual([]);

    const echoed = await runExec(emulator, "pod-a", ["sh", "-c", "cat; echo err >&2; id -u; exit 3"], "from stdin\n");
    expect(echoed.protocol).toBe("v5.channel.k8s.io");
    expect(echoed.stdout).toBe("from stdin\n1000\n");
    expect(echoed.stderr).toBe("err\n");
    expect(echoed.status).toMatchObject({
      status: "Failure",
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "3" }] },
    });
    expect((await runExec(emulator, "pod-a", ["true"])).status?.status).toBe("Success");
    // Denied egress: the container has no network, so the node's port is unreachable.
    const probe = await runExec(emulator, "pod-a", ["python3", "-c", `import socket; socket.create_connection(("${emulator.nodeAddress}", 443), 2)`]);
    expect(probe.stderr).toMatch(/unreachable|Errno/);
    expect(probe.status?.status).toBe("Failure");
    // Read-only root, writable emptyDir.
    expect((await runExec(emulator, "pod-a", ["sh", "-c", "touch /x 2>/dev/null && echo root-writable; touch /workspace/y && echo ok"])).stdout).toBe(
      "ok\n",
    );

    await core.deleteNamespacedPod({ namespace: "sbx", name: "pod-a", gracePeriodSeconds: 0 });
    expect(emulator.listPodNames("sbx")).toEqual([]);
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "deny-a" });
  });

  it("accepts but does not enforce policies in the ignored mode; serves v4 only when asked", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const emulator = shared.emulator;
    const { core, networking } = clients(emulator);
    emulator.setModes({ networkPolicy: "ignored", execProtocols: "v4" });
    try {
      await networking.createNamespacedNetworkPolicy({
        namespace: "sbx",
        body: { metadata: { name: "deny-b" }, spec: { podSelector: { matchLabels: { case: "b" } }, policyTypes: ["Egress"], egress: [] } },
      });
      await core.createNamespacedPod({ namespace: "sbx", body: sleeperPod("pod-b", { case: "b" }) });
      await waitFor(
        () => core.readNamespacedPod({ namespace: "sbx", name: "pod-b" }),
        (pod) => pod.status?.phase === "Running",
      );
      const probe = await runExec(emulator, "pod-b", [
        "python3",
        "-c",
        `import socket; socket.create_connection(("${emulator.nodeAddress}", 443), 5); print("connected")`,
      ]);
      expect(probe.protocol).toBe("v4.channel.k8s.io");
      expect(probe.stdout).toBe("connected\n");
    } finally {
      emulator.setModes({ networkPolicy: "enforced", execProtocols: "v5" });
      await core.deleteNamespacedPod({ namespace: "sbx", name: "pod-b" }).catch(() => {});
      await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "deny-b" }).catch(() => {});
    }
  });

  it("reports unschedulable Pods and failed image pulls with events, and enforces activeDeadlineSeconds", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const emulator = shared.emulator;
    const { core } = clients(emulator);
    emulator.setModes({ scheduling: "unschedulable" });
    await core.createNamespacedPod({ namespace: "sbx", body: sleeperPod("pod-c", {}) });
    emulator.setModes({ scheduling: "normal" });
    const pending = await waitFor(
      () => core.readNamespacedPod({ namespace: "sbx", name: "pod-c" }),
      (pod) => (pod.status?.conditions ?? []).length > 0,
    );
    expect(pending.status?.conditions?.[0]).toMatchObject({ type: "PodScheduled", status: "False", reason: "Unschedulable" });
    const events = await core.listNamespacedEvent({ namespace: "sbx", fieldSelector: "involvedObject.name=pod-c" });
    expect(events.items.map((event) => event.reason)).toEqual(["FailedScheduling"]);

    const missingImage = sleeperPod("pod-d", {});
    missingImage.spec!.containers[0]!.image = "sbx-test/does-not-exist:0";
    await core.createNamespacedPod({ namespace: "sbx", body: missingImage });
    const pulling = await waitFor(
      () => core.readNamespacedPod({ namespace: "sbx", name: "pod-d" }),
      (pod) => (pod.status?.containerStatuses ?? []).length > 0,
    );
    expect(pulling.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("ErrImagePull");

    await core.createNamespacedPod({ namespace: "sbx", body: sleeperPod("pod-e", {}, { activeDeadlineSeconds: 2 }) });
    const ended = await waitFor(
      () => core.readNamespacedPod({ namespace: "sbx", name: "pod-e" }),
      (pod) => pod.status?.phase === "Failed",
      30_000,
    );
    expect(ended.status).toMatchObject({ phase: "Failed", reason: "DeadlineExceeded" });
    for (const name of ["pod-c", "pod-d", "pod-e"]) await core.deleteNamespacedPod({ namespace: "sbx", name });
  });
});
