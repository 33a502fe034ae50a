import { describeSandboxContract } from "@sbx/contract";
import { createSandbox, isSbxError, type BackendStatus, type SandboxProviderV1 } from "@sbx/core";
import { createSandboxProvider, MODAL_CAPABILITIES, modalSettingsSchema } from "@sbx/modal";
import { startModalEmulator, type ModalEmulator } from "@sbx/modal-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { e2bEmulatorServersFixture } from "./fixtures/e2b-emulator-servers.js";

/**
 * The full contract suite against @sbx/modal, through the Modal gRPC emulator (tools/modal-emulator): the unmodified
 * `modal` 0.11 SDK talks to it over plaintext HTTP/2 on 127.0.0.1, and every sandbox is a real container from the
 * test image. The emulator's URL and token reach the adapter as provider settings. If the emulator cannot start
 * (no Docker), every test skips with the reason, or fails when SBX_REQUIRE names modal.
 *
 * `limits.applied` requests only the limits Modal has (cpus, memoryMiB) and proves a pids limit is refused (it was
 * skipped before); the modal-specific test below also checks the limits reach the container.
 */
const image = process.env.SBX_MODAL_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
let emulator: ModalEmulator | undefined;
let startFailure: string | undefined;
let provider: SandboxProviderV1 | undefined;

beforeAll(async () => {
  try {
    emulator = await startModalEmulator({ image });
    provider = createSandboxProvider({
      tokenId: emulator.tokenId,
      tokenSecret: emulator.tokenSecret,
      serverUrl: emulator.serverUrl,
      logLevel: "error",
    });
  } catch (error) {
    startFailure = error instanceof Error ? error.message : String(error);
  }
});

afterAll(async () => {
  await emulator?.stop();
});

function current(): SandboxProviderV1 {
  if (!provider) throw new Error(`the Modal emulator is not running: ${startFailure ?? "beforeAll has not run"}`);
  return provider;
}

/** Forwards to the provider made in beforeAll (the harness reads the manifest at collection time). */
const emulatedProvider: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: "modal",
  packageName: "@sbx/modal",
  capabilities: MODAL_CAPABILITIES,
  isolating: true,
  settingsSchema: modalSettingsSchema,
  async detect(options): Promise<BackendStatus> {
    if (!provider) {
      return {
        backend: "modal",
        usable: false,
        isolating: true,
        reason: `The Modal emulator could not start: ${startFailure ?? "unknown"}`,
        remedy: "Start Docker Engine with the sbx-test/python:3.11 image (bash .ci/provision.sh).",
      };
    }
    const status = await provider.detect(options);
    return { ...status, reason: `${status.reason} (Modal emulator at ${emulator!.serverUrl})` };
  },
  create: (request) => current().create(request),
  connect: (request) => current().connect!(request),
  list: (request) => current().list!(request),
  getOrCreate: (request) => current().getOrCreate!(request),
  listSnapshots: (request) => current().listSnapshots!(request),
  deleteSnapshot: (request) => current().deleteSnapshot!(request),
};

describeSandboxContract("modal (emulator)", () => emulatedProvider, {
  network: e2bEmulatorServersFixture({ image, networkName: () => emulator!.networkName }),
  timeoutMs: 120_000,
  sandboxExists: async (id) => emulator!.listSandboxIds().includes(id),
  // Modal has CPU and memory limits but no pids limit: limits.applied requests these two and proves pids is refused.
  limits: { cpus: 1, memoryMiB: 256 },
  // modal@0.11.1's `exec(argv, { pty: true })` has one size, 80×24, and no resize: a declared difference (ADR 0054).
  terminalFixedSize: { cols: 80, rows: 24 },
  // Terminated through the emulator's control plane, as another client or Modal's dashboard would.
  removeOutOfBand: (sandbox) => emulator!.terminateSandbox(sandbox.id),
  // ADR 0029: Modal runs every command as the image's user (root in the test image; its SDK cannot choose another),
  // inside gVisor, on an image filesystem that is writable by design. Measured: CapEff a80425fb, and /, /etc, /usr,
  // /var writable. The boundary is the gVisor sandbox, not the Linux user: these two do not hold, and say so here.
  skip: {
    "isolation.no-capabilities":
      "Modal's sandbox user is the image's root (its SDK has no per-command user); root keeps its capabilities inside gVisor, which is the boundary (ADR 0029)",
    "isolation.read-only-root":
      "Modal's image filesystem is writable by its root user by design (pip install in a sandbox); the boundary is gVisor, not a read-only image (ADR 0029)",
  },
});

describe("modal (emulator): resource limits Modal has", () => {
  it("cpus and memoryMiB are sent as hard limits and applied to the sandbox; pids is refused before anything is created", async (context) => {
    const status = await emulatedProvider.detect();
    if (!status.usable) {
      if ((process.env.SBX_REQUIRE ?? "").split(",").includes("modal")) throw new Error(status.reason);
      return context.skip(status.reason);
    }
    // Sandboxes of earlier tests may still be winding down: only what this test creates is counted.
    const before = new Set(emulator!.listSandboxIds());
    await using sandbox = await createSandbox(emulatedProvider, { limits: { cpus: 0.5, memoryMiB: 256 } });
    const record = sandbox.audit().policies.limits;
    expect(record.requested).toEqual({ cpus: 0.5, memoryMiB: 256 });
    expect(record.applied).toEqual({ cpus: 0.5, memoryMiB: 256 });
    expect(emulator!.inspectSandbox(sandbox.id)!.dockerResources).toEqual({ nanoCpus: 500_000_000, memoryBytes: 256 * 1024 * 1024 });
    const limit = await sandbox.commands.run("cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max");
    expect(limit.stdout.trim()).toBe(String(256 * 1024 * 1024));
    const refused = await createSandbox(emulatedProvider, { limits: { cpus: 1, pids: 128 } }).catch((error: unknown) => error);
    expect(isSbxError(refused, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((refused as { supportedBy: string[] }).supportedBy).toContain("docker");
    expect(emulator!.listSandboxIds().filter((id) => !before.has(id))).toEqual([sandbox.id]);
  }, 120_000);
});
