import { describeSandboxContract } from "@sbx/contract";
import type { BackendStatus, SandboxProviderV1 } from "@sbx/core";
import { startKubeEmulator, type KubeEmulator } from "@sbx/kube-emulator";
import { createSandboxProvider, KUBERNETES_CAPABILITIES, kubernetesSettingsSchema, objectNameOf } from "@sbx/kubernetes";
import { afterAll, beforeAll } from "vitest";
import { e2bEmulatorServersFixture } from "./fixtures/e2b-emulator-servers.js";

/**
 * The full contract suite against @sbx/kubernetes, through the Kubernetes API emulator (tools/kube-emulator: the
 * unmodified client-node against REST and pods/exec over WebSocket; every Pod a real container from the test image,
 * its deny-all NetworkPolicy enforced as "no network"). The emulator starts in beforeAll; its kubeconfig reaches the
 * adapter as provider settings. If it cannot start (no Docker), every test skips with the reason, or fails when
 * SBX_REQUIRE names k8s. What only a real cluster proves is listed in docs/backends/kubernetes.md.
 */
const image = process.env.SBX_KUBE_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
let emulator: KubeEmulator | undefined;
let startFailure: string | undefined;
let provider: SandboxProviderV1 | undefined;

beforeAll(async () => {
  try {
    emulator = await startKubeEmulator({ image });
    provider = createSandboxProvider({ kubeconfig: emulator.kubeconfig, namespace: "sbx", defaultImage: image });
  } catch (error) {
    startFailure = error instanceof Error ? error.message : String(error);
  }
});

afterAll(async () => {
  await emulator?.stop();
});

function current(): SandboxProviderV1 {
  if (!provider) throw new Error(`the kube emulator is not running: ${startFailure ?? "beforeAll has not run"}`);
  return provider;
}

/** The harness reads the manifest at collection time, before the emulator exists: a provider forwarding to the real one. */
const emulatedProvider: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: "k8s",
  packageName: "@sbx/kubernetes",
  capabilities: KUBERNETES_CAPABILITIES,
  isolating: true,
  settingsSchema: kubernetesSettingsSchema,
  async detect(options): Promise<BackendStatus> {
    if (!provider) {
      return {
        backend: "k8s",
        usable: false,
        isolating: true,
        reason: `The kube emulator could not start: ${startFailure ?? "unknown"}`,
        remedy: "Start Docker Engine with the sbx-test/python:3.11 image (bash .ci/provision.sh).",
      };
    }
    const status = await provider.detect(options);
    return { ...status, reason: `${status.reason} (kube emulator at ${emulator!.url})` };
  },
  create: (request) => current().create(request),
  connect: (request) => current().connect!(request),
  list: (request) => current().list!(request),
  getOrCreate: (request) => current().getOrCreate!(request),
};

describeSandboxContract("k8s (emulator)", () => emulatedProvider, {
  // Egress-allowed Pods join the emulator's bridge network; the fixture's servers are containers on it.
  network: e2bEmulatorServersFixture({ image, networkName: () => emulator!.networkName }),
  timeoutMs: 120_000,
  limits: { cpus: 1, memoryMiB: 256 },
  // The node running the Pod vanishes: its container and the Pod object are removed behind sbx's back.
  removeOutOfBand: (sandbox) => emulator!.loseNode("sbx", objectNameOf(sandbox.id)),
  sandboxExists: async (id) => emulator!.listPodNames("sbx").includes(objectNameOf(id)),
  skip: {},
});
