import { BackendUnavailableError, PolicyNotEnforcedError, type BackendStatus, type PolicyRecord, type SandboxProviderV1 } from "@sbx/core";
import {
  registerBackendManifest,
  type DriverAudit,
  type ProviderCreateRequest,
  type ResolvedCreateOptions,
  type SandboxDriverV1,
  throwIfAborted,
} from "@sbx/core/adapter";
import type { App, Image, ModalClient, Sandbox } from "modal";
import { getOrCreateNamedModal, listModalSandboxes, MODAL_POLICY_TAG, policyTagOf } from "./modal-directory.js";
import { MODAL_CAPABILITIES } from "./modal-capabilities.js";
import { clientHasCredentials, createModalClient } from "./modal-client.js";
import { ModalDriver, MODAL_WORKSPACE } from "./modal-driver.js";
import { planModalNetwork } from "./modal-network-policy.js";
import { planModalLifetime, planModalLimits } from "./modal-resources.js";
import { modalSettingsSchema, parseModalSettings, type ModalSettings, type ResolvedModalSettings } from "./modal-settings.js";
import { mapModalError, MODAL_CREDENTIALS_REMEDY } from "./map-modal-error.js";
import { deleteModalSnapshot, listModalSnapshots, snapshotImageForCreate, withSnapshotRecord, type ModalSnapshotStore } from "./modal-snapshots.js";

/** Image used for `modal://` with nothing after the scheme: Python on Debian slim, pulled by Modal from Docker Hub. */
export const DEFAULT_MODAL_IMAGE = "python:3.12-slim";

/** Backends that work without a Modal account, named when credentials are missing. */
const OTHER_BACKENDS = "docker:// (a local Docker Engine) or fake:// (in-process, not a security boundary)";

function missingCredentialsError(): BackendUnavailableError {
  return new BackendUnavailableError({
    backend: "modal",
    retryable: false,
    remedy: MODAL_CREDENTIALS_REMEDY,
    alternatives: ["docker", "fake"],
    message: `No Modal credentials: ${MODAL_CREDENTIALS_REMEDY} Backends that need no account: ${OTHER_BACKENDS}.`,
  });
}

const MOUNTS_RECORD: PolicyRecord = {
  requested: [],
  applied: [],
  enforcement: "None: a Modal sandbox runs on Modal's machines and cannot see host folders (HOST_MOUNTS is off).",
};

function userRecord(options: ResolvedCreateOptions, verifiedRoot: boolean): PolicyRecord {
  return {
    requested: options.user,
    applied: verifiedRoot ? "root" : "image default",
    enforcement: verifiedRoot
      ? "Checked with `id -u` at create: commands run as root. Modal runs every exec as the container's user (its SDK has no per-command user); the sandbox (gVisor) is the isolation boundary."
      : "Commands run as the image's default user (root unless the image sets USER): Modal's SDK has no per-command user. The sandbox (gVisor) is the isolation boundary, not the Linux user.",
  };
}

/**
 * The Modal provider: sandboxes are Modal Sandboxes made through Modal's official JS SDK (`modal` 0.11).
 * `createSandbox("modal://python:3.12-slim")` loads it; settings (`tokenId`, `tokenSecret`, `appName`,
 * `environment`, `serverUrl`, `idleTimeoutMs`, `logLevel`) go through `createSandbox(..., { settings })` or here.
 */
export function createSandboxProvider(settings?: ModalSettings | Record<string, unknown>): SandboxProviderV1 {
  const resolved: ResolvedModalSettings = parseModalSettings(settings ?? {});
  let client: ModalClient | undefined;
  let app: Promise<App> | undefined;
  const images = new Map<string, Image>();

  function clientWithCredentials(): ModalClient {
    client ??= createModalClient(resolved);
    if (!clientHasCredentials(client)) throw missingCredentialsError();
    return client;
  }

  function appOf(modal: ModalClient): Promise<App> {
    app ??= modal.apps
      .fromName(resolved.appName, { createIfMissing: true, ...(resolved.environment ? { environment: resolved.environment } : {}) })
      .catch((error: unknown) => {
        app = undefined;
        throw error;
      });
    return app;
  }

  function imageOf(modal: ModalClient, tag: string): Image {
    let image = images.get(tag);
    if (!image) {
      image = modal.images.fromRegistry(tag);
      images.set(tag, image);
    }
    return image;
  }

  const snapshotStore = (modal: ModalClient): ModalSnapshotStore => ({ modal, environment: resolved.environment });

  const provider: SandboxProviderV1 = {
    specificationVersion: "sbx-v1",
    backend: "modal",
    packageName: "@sbx/modal",
    capabilities: MODAL_CAPABILITIES,
    isolating: true,
    settingsSchema: modalSettingsSchema,

    async detect(): Promise<BackendStatus> {
      let usable: boolean;
      try {
        usable = clientHasCredentials((client ??= createModalClient(resolved)));
      } catch (error) {
        return {
          backend: "modal",
          usable: false,
          isolating: true,
          reason: `The Modal SDK refused its configuration: ${error instanceof Error ? error.message : String(error)}`,
          remedy: MODAL_CREDENTIALS_REMEDY,
        };
      }
      if (!usable) {
        return {
          backend: "modal",
          usable: false,
          isolating: true,
          reason: "No Modal credentials (settings.tokenId/tokenSecret, MODAL_TOKEN_ID/MODAL_TOKEN_SECRET, or ~/.modal.toml).",
          remedy: `${MODAL_CREDENTIALS_REMEDY} Or use ${OTHER_BACKENDS}.`,
        };
      }
      return {
        backend: "modal",
        usable: true,
        isolating: true,
        reason: `Modal credentials are set; sandboxes are created in the app "${resolved.appName}" at ${client!.profile.serverUrl} (the token is checked on first use).`,
        remedy: "",
      };
    },

    async create(request: ProviderCreateRequest): Promise<SandboxDriverV1> {
      const modal = clientWithCredentials();
      const { options, signal } = request;
      // Set by getOrCreate (a named sandbox: Modal's name in sbx's app, its policy in a tag); core's creates have none.
      const name = (request as ProviderCreateRequest & { name?: string }).name;
      throwIfAborted(signal, "modal");
      const tag = request.target || DEFAULT_MODAL_IMAGE;
      const network = planModalNetwork(options.network);
      const limits = planModalLimits(options.limits);
      const lifetime = planModalLifetime(options.timeoutMs, resolved.idleTimeoutMs);
      const tags = { ...options.metadata, ...(name === undefined ? {} : { [MODAL_POLICY_TAG]: policyTagOf(options) }) };
      // A create from a snapshot (ADR 0062): its image is the snapshot's, checked before anything is created.
      const fromSnapshot = options.fromSnapshot;
      const image =
        fromSnapshot === undefined ? imageOf(modal, tag) : await snapshotImageForCreate(snapshotStore(modal), fromSnapshot, request.target);
      let sandbox: Sandbox;
      try {
        sandbox = await modal.sandboxes.create(await appOf(modal), image, {
          ...network.request,
          ...limits.request,
          ...lifetime.request,
          workdir: MODAL_WORKSPACE,
          ...(Object.keys(tags).length > 0 ? { tags } : {}),
          ...(name === undefined ? {} : { name }),
        });
      } catch (error) {
        throw mapModalError(error, { operation: "create a sandbox" });
      }
      const driver = (audit: DriverAudit) =>
        new ModalDriver(sandbox, { audit: withSnapshotRecord(audit, fromSnapshot), snapshots: snapshotStore(modal) });
      try {
        throwIfAborted(signal, "modal");
        const verifiedRoot = options.user === "root" ? await requireRoot(sandbox) : false;
        const notes = [
          fromSnapshot === undefined ? `Modal image: ${tag} (pulled by Modal from its registry).` : `Modal image: ${fromSnapshot} (the snapshot's).`,
          `Modal app: ${resolved.appName}.`,
          ...lifetime.notes,
        ];
        notes.push(
          `Egress fields sent to Modal: ${JSON.stringify(network.request)}. Modal's SDK offers no read-back of a sandbox's network policy, so the applied value is what was sent.`,
        );
        return driver({
          backendVersion: `Modal (JS SDK modal@${modal.version()})`,
          policies: {
            network: network.record,
            limits: limits.record,
            mounts: MOUNTS_RECORD,
            user: userRecord(options, verifiedRoot),
            lifetime: lifetime.record,
          },
          notes,
        });
      } catch (error) {
        await sandbox.terminate().catch(() => {});
        sandbox.detach();
        throw mapModalError(error, { operation: "create a sandbox", sandboxId: sandbox.sandboxId });
      }
    },

    async list(request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal }) {
      const modal = clientWithCredentials();
      let sbxApp: App;
      try {
        sbxApp = await appOf(modal);
      } catch (error) {
        throw mapModalError(error, { operation: "list sandboxes" });
      }
      return listModalSandboxes(modal, sbxApp, request);
    },

    listSnapshots: (request: { signal?: AbortSignal }) => listModalSnapshots(snapshotStore(clientWithCredentials()), request.signal),

    deleteSnapshot: (request: { id: string; signal?: AbortSignal }) =>
      deleteModalSnapshot(snapshotStore(clientWithCredentials()), request.id, request.signal),

    getOrCreate: (request: ProviderCreateRequest & { name: string }) =>
      getOrCreateNamedModal(
        {
          modal: clientWithCredentials(),
          appName: resolved.appName,
          environment: resolved.environment,
          create: () => provider.create(request),
          connect: (sandboxId) => provider.connect!({ sandboxId, options: request.options, signal: request.signal }),
        },
        request,
      ),

    async connect(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<SandboxDriverV1> {
      const modal = clientWithCredentials();
      const { sandboxId } = request;
      let sandbox: Sandbox;
      try {
        sandbox = await modal.sandboxes.fromId(sandboxId);
        const exitCode = await sandbox.poll();
        if (exitCode !== null)
          throw Object.assign(new Error(`Sandbox ${sandboxId} has already finished (exit code ${exitCode}).`), { name: "ConflictError" });
      } catch (error) {
        throw mapModalError(error, { operation: "connect to a sandbox", sandboxId });
      }
      const notes = ["Connected to an existing Modal sandbox; its policies were set by whoever created it, and Modal's SDK cannot read them back."];
      const unknown = (enforcement: string): PolicyRecord => ({ requested: null, applied: null, enforcement });
      return new ModalDriver(sandbox, {
        snapshots: snapshotStore(modal),
        audit: {
          backendVersion: `Modal (JS SDK modal@${modal.version()})`,
          policies: {
            network: unknown("As set when the sandbox was created (blockNetwork / outbound allowlists); Modal's SDK offers no read-back."),
            limits: unknown("As set when the sandbox was created (cpu / memory limits); Modal's SDK offers no read-back."),
            mounts: MOUNTS_RECORD,
            user: userRecord(request.options, false),
            lifetime: unknown("As set when the sandbox was created (timeout / idle timeout), enforced by Modal; no read-back."),
          },
          notes,
        },
      });
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

/** `user: "root"` is checked, not assumed: Modal's exec has no user parameter. */
async function requireRoot(sandbox: Sandbox): Promise<boolean> {
  const process = await sandbox.exec(["id", "-u"]);
  const [uid] = await Promise.all([process.stdout.readText(), process.wait()]);
  if (uid.trim() !== "0") {
    throw new PolicyNotEnforcedError({
      backend: "modal",
      policy: "user",
      message: `user: "root" was asked for, but commands in this Modal image run as uid ${uid.trim() || "unknown"} and Modal's SDK cannot choose the user; the sandbox was terminated.`,
    });
  }
  return true;
}

/** Alias of `createSandboxProvider`, in the style of AI SDK providers: `createSandbox(modal({ tokenId, tokenSecret }))`. */
export const modal = createSandboxProvider;

export { MODAL_WORKSPACE };
