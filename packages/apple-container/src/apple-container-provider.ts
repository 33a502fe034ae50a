import { randomBytes } from "node:crypto";
import { BackendUnavailableError, type BackendStatus, type SandboxProviderV1 } from "@sbx/core";
import { registerBackendManifest, throwIfAborted, type ProviderCreateRequest, type SandboxDriverV1 } from "@sbx/core/adapter";
import { APPLE_CONTAINER_CAPABILITIES } from "./apple-container-capabilities.js";
import { AppleContainerDriver } from "./apple-container-driver.js";
import {
  appleContainerSettingsSchema,
  DEFAULT_APPLE_CONTAINER_IMAGE,
  parseAppleContainerSettings,
  type AppleContainerSettings,
} from "./apple-container-settings.js";
import { auditFromInspect } from "./container-audit.js";
import { runCli } from "./container-cli.js";
import { detectContainer, type Detection } from "./container-detection.js";
import { parseContainers } from "./container-output.js";
import { APPLE_CONTAINER_WORKSPACE, planContainerRun } from "./container-run-plan.js";
import { mapAppleContainerError } from "./map-apple-container-error.js";
import { sweepOrphans } from "./sweep-orphans.js";

/** How often a provider sweeps orphans (at most), in milliseconds. */
const SWEEP_INTERVAL_MS = 60_000;

type UsableDetection = Extract<Detection, { usable: true }>;

/**
 * The Apple `container` provider: each sandbox is one lightweight Linux VM made by Apple's `container` CLI (macOS 26 on
 * Apple silicon), driven through the CLI (the only interface Apple offers a non-Swift program).
 * `createSandbox("apple-container://python:3.12-slim")` loads it. Settings: `image`, `binary`, `environment`, `checkPlatform`,
 * `user`, `requestTimeoutMs`, `createTimeoutMs`, `agentCommands` (see `appleContainerSettingsSchema`).
 */
export function createSandboxProvider(settings?: AppleContainerSettings | Record<string, unknown>): SandboxProviderV1 {
  const resolved = parseAppleContainerSettings(settings ?? {});
  let ready: Promise<UsableDetection> | undefined;
  let lastSweep = 0;

  const detect = (signal?: AbortSignal) =>
    detectContainer({
      binary: resolved.binary,
      environment: resolved.environment,
      checkPlatform: resolved.checkPlatform,
      timeoutMs: resolved.requestTimeoutMs,
      signal,
    });

  /** A usable backend, detected once per provider (a failed detection is retried next time). */
  function requireReady(): Promise<UsableDetection> {
    ready ??= detect().then((detection) => {
      if (detection.usable) return detection;
      ready = undefined;
      throw new BackendUnavailableError({
        backend: "apple-container",
        retryable: false,
        remedy: detection.remedy,
        alternatives: ["docker", "e2b", "modal"],
        message: `Apple's container backend is not usable here: ${detection.reason} ${detection.remedy}`,
      });
    });
    return ready;
  }

  const provider: SandboxProviderV1 = {
    specificationVersion: "sbx-v1",
    backend: "apple-container",
    packageName: "@sbx/apple-container",
    capabilities: APPLE_CONTAINER_CAPABILITIES,
    isolating: true,
    settingsSchema: appleContainerSettingsSchema,

    async detect(options): Promise<BackendStatus> {
      const detection = await detect(options?.signal);
      return detection.usable
        ? { backend: "apple-container", usable: true, isolating: true, reason: detection.reason, remedy: "" }
        : { backend: "apple-container", usable: false, isolating: true, reason: detection.reason, remedy: detection.remedy };
    },

    async create(request: ProviderCreateRequest): Promise<SandboxDriverV1> {
      const { options, signal } = request;
      const image = request.target || resolved.image;
      const id = `sbx-${randomBytes(8).toString("hex")}`;
      // Pure validation first: a refused option creates nothing.
      const plan = planContainerRun({ id, image, create: options, defaultUser: resolved.user, now: Date.now(), ownerPid: process.pid });
      const { cli, version } = await requireReady();
      throwIfAborted(signal, "apple-container");
      if (Date.now() - lastSweep > SWEEP_INTERVAL_MS) {
        lastSweep = Date.now();
        void sweepOrphans({ cli, timeoutMs: resolved.requestTimeoutMs });
      }
      const created = await runCli(cli, plan.arguments, { timeoutMs: resolved.createTimeoutMs, signal });
      const remove = () => runCli(cli, ["delete", "--force", id], { timeoutMs: resolved.requestTimeoutMs });
      if (created.exitCode !== 0) {
        await remove();
        throwIfAborted(signal, "apple-container");
        throw mapAppleContainerError(created, { operation: "create a sandbox", timeoutMs: resolved.createTimeoutMs });
      }
      try {
        throwIfAborted(signal, "apple-container");
        const inspected = await runCli(cli, ["inspect", id], { timeoutMs: resolved.requestTimeoutMs, signal });
        if (inspected.exitCode !== 0)
          throw mapAppleContainerError(inspected, { operation: "create a sandbox", sandboxId: id, timeoutMs: resolved.requestTimeoutMs });
        const record = parseContainers(inspected.stdout)?.find((entry) => entry.id === id);
        if (!record)
          throw mapAppleContainerError(
            { ...inspected, exitCode: 1, stderr: `container inspect ${id} printed no such container` },
            { operation: "create a sandbox" },
          );
        const audit = auditFromInspect({ record, plan, create: options, version });
        const lifetime = setTimeout(() => void driver.expire().catch(() => {}), Math.max(0, plan.expiresAt - Date.now()));
        lifetime.unref();
        const driver = new AppleContainerDriver(id, {
          cli,
          audit,
          commandUser: plan.commandUser,
          requestTimeoutMs: resolved.requestTimeoutMs,
          agentCommands: resolved.agentCommands,
          onDestroyed: () => clearTimeout(lifetime),
        });
        return driver;
      } catch (error) {
        await remove();
        throw error;
      }
    },
  };
  registerBackendManifest({
    backend: provider.backend,
    packageName: provider.packageName,
    capabilities: provider.capabilities,
    isolating: provider.isolating,
  });
  return provider;
}

/** Alias of `createSandboxProvider`, in the style of AI SDK providers: `createSandbox(appleContainer({ binary }))`. */
export const appleContainer = createSandboxProvider;

export { APPLE_CONTAINER_WORKSPACE, DEFAULT_APPLE_CONTAINER_IMAGE };
