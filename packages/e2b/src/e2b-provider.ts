import { Sandbox as CodeInterpreterSandbox } from "@e2b/code-interpreter";
import { BackendUnavailableError, PolicyNotEnforcedError, type BackendStatus, type PolicyRecord, type SandboxProviderV1 } from "@sbx/core";
import {
  registerBackendManifest,
  type DriverAudit,
  type ProviderCreateRequest,
  type ResolvedCreateOptions,
  type SandboxDriverV1,
  throwIfAborted,
} from "@sbx/core/adapter";
import { E2B_CAPABILITIES } from "./e2b-capabilities.js";
import { E2BDriver, E2B_WORKSPACE } from "./e2b-driver.js";
import { E2B_MANAGED_METADATA_KEY, listE2BSandboxes } from "./e2b-listing.js";
import { planE2BNetwork, type E2BNetworkPlan } from "./e2b-network-policy.js";
import { connectionOptionsOf, e2bSettingsSchema, parseE2BSettings, type E2BSettings, type ResolvedE2BSettings } from "./e2b-settings.js";
import { E2B_KEY_REMEDY, mapE2BError } from "./map-e2b-error.js";

/** Template used for `e2b://` with nothing after the scheme: E2B's code interpreter. */
export const DEFAULT_E2B_TEMPLATE = "code-interpreter-v1";

/** Backends that work without an E2B account, named when the key is missing. */
const OTHER_BACKENDS = "docker:// (a local Docker Engine) or fake:// (in-process, not a security boundary)";

/** Lifetimes within this many milliseconds of the request count as applied as asked (E2B works in whole seconds). */
const LIFETIME_TOLERANCE_MS = 2_000;

type SandboxInfo = Awaited<ReturnType<CodeInterpreterSandbox["getInfo"]>>;

function missingKeyError(): BackendUnavailableError {
  return new BackendUnavailableError({
    backend: "e2b",
    retryable: false,
    remedy: E2B_KEY_REMEDY,
    alternatives: ["docker", "fake"],
    message: `No E2B API key: ${E2B_KEY_REMEDY} Backends that need no account: ${OTHER_BACKENDS}.`,
  });
}

function lifetimeRecord(requestedMs: number | null, info: SandboxInfo | undefined, notes: string[]): PolicyRecord {
  const appliedMs = info ? info.endAt.getTime() - info.startedAt.getTime() : null;
  if (requestedMs !== null && appliedMs !== null && appliedMs + LIFETIME_TOLERANCE_MS < requestedMs) {
    notes.push(
      `E2B cut the sandbox lifetime: ${requestedMs} ms was requested, ${appliedMs} ms was applied (the account tier's maximum). The sandbox ends at ${info!.endAt.toISOString()}.`,
    );
  }
  return {
    requested: requestedMs === null ? null : { timeoutMs: requestedMs },
    applied: appliedMs === null ? null : { timeoutMs: appliedMs, endAt: info!.endAt.toISOString() },
    enforcement: "E2B kills the sandbox at endAt (sent as the create request's timeout, read back with getInfo), even if this process dies.",
  };
}

/** Checks E2B's own report of the egress settings against what was sent; throws when they contradict it. */
function verifyNetwork(plan: E2BNetworkPlan, info: SandboxInfo | undefined, notes: string[]): void {
  const reportedAccess = info?.allowInternetAccess;
  const reportedNetwork = info?.network;
  notes.push(
    `Egress fields sent to E2B: ${JSON.stringify(plan.request)}. E2B reported back: ${JSON.stringify({ allowInternetAccess: reportedAccess ?? null, network: reportedNetwork ?? null })}.`,
  );
  const sentAccess = plan.request.allowInternetAccess;
  const contradicts =
    (sentAccess === false && reportedAccess === true) ||
    (plan.request.network !== undefined && reportedNetwork?.denyOut !== undefined && !reportedNetwork.denyOut.includes("0.0.0.0/0"));
  if (contradicts) {
    throw new PolicyNotEnforcedError({
      backend: "e2b",
      policy: "network",
      message: `E2B reports egress settings that do not match what was sent (sent ${JSON.stringify(plan.request)}, reported ${JSON.stringify({ allowInternetAccess: reportedAccess, network: reportedNetwork })}); the sandbox was killed rather than run with more network access than asked.`,
    });
  }
}

function userRecord(options: ResolvedCreateOptions): PolicyRecord {
  const linuxUser = options.user === "root" ? "root" : "user";
  return {
    requested: options.user,
    applied: linuxUser,
    enforcement: `envd runs commands and file operations as the Linux user "${linuxUser}" inside the E2B sandbox VM; the code interpreter runs code as the template's own user ("user" on code-interpreter-v1).`,
  };
}

function limitsRecord(info: SandboxInfo | undefined): PolicyRecord {
  return {
    requested: null,
    applied: info ? { cpus: info.cpuCount, memoryMiB: info.memoryMB } : null,
    enforcement:
      "Set by the E2B template at build time (Firecracker VM size); sbx cannot change it per sandbox, so RESOURCE_LIMITS is off and `limits` is refused.",
  };
}

const MOUNTS_RECORD: PolicyRecord = {
  requested: [],
  applied: [],
  enforcement: "None: an E2B sandbox runs on E2B's machines and cannot see host folders (HOST_MOUNTS is off).",
};

/**
 * The E2B provider: sandboxes are E2B microVMs made through the official `e2b` and `@e2b/code-interpreter` SDKs.
 * `createSandbox("e2b://code-interpreter-v1")` loads it; pass settings (`apiKey`, `domain`, `apiUrl`,
 * `sandboxUrl`, `requestTimeoutMs`) through `createSandbox(..., { settings })` or directly here.
 */
export function createSandboxProvider(settings?: E2BSettings | Record<string, unknown>): SandboxProviderV1 {
  const resolved: ResolvedE2BSettings = parseE2BSettings(settings ?? {});
  const connection = connectionOptionsOf(resolved);
  const provider: SandboxProviderV1 = {
    specificationVersion: "sbx-v1",
    backend: "e2b",
    packageName: "@sbx/e2b",
    capabilities: E2B_CAPABILITIES,
    isolating: true,
    settingsSchema: e2bSettingsSchema,

    async detect(): Promise<BackendStatus> {
      if (!resolved.apiKey) {
        return {
          backend: "e2b",
          usable: false,
          isolating: true,
          reason: "No E2B API key (settings.apiKey or E2B_API_KEY).",
          remedy: `${E2B_KEY_REMEDY} Or use ${OTHER_BACKENDS}.`,
        };
      }
      const endpoint = resolved.apiUrl ?? `https://api.${resolved.domain ?? process.env.E2B_DOMAIN ?? "e2b.app"}`;
      return {
        backend: "e2b",
        usable: true,
        isolating: true,
        reason: `An E2B API key is set; sandboxes are created at ${endpoint} (the key is checked on first use).`,
        remedy: "",
      };
    },

    async create(request: ProviderCreateRequest): Promise<SandboxDriverV1> {
      if (!resolved.apiKey) throw missingKeyError();
      const { options, signal } = request;
      throwIfAborted(signal, "e2b");
      const template = request.target || DEFAULT_E2B_TEMPLATE;
      const plan = planE2BNetwork(options.network);
      let sandbox: CodeInterpreterSandbox;
      try {
        sandbox = await CodeInterpreterSandbox.create(template, {
          ...connection,
          timeoutMs: options.timeoutMs,
          // sbx's marker last: a listing finds sbx's sandboxes only (e2b-listing.ts).
          metadata: { ...options.metadata, [E2B_MANAGED_METADATA_KEY]: "1" },
          ...plan.request,
          network: plan.request.network ? { allowOut: [...plan.request.network.allowOut], denyOut: [...plan.request.network.denyOut] } : undefined,
          signal,
        });
      } catch (error) {
        throw mapE2BError(error, { operation: "create a sandbox", timeoutMs: resolved.requestTimeoutMs });
      }
      try {
        throwIfAborted(signal, "e2b");
        const info = await sandbox.getInfo({ requestTimeoutMs: resolved.requestTimeoutMs });
        const notes: string[] = [`E2B template: ${template}.`];
        verifyNetwork(plan, info, notes);
        const audit: DriverAudit = {
          backendVersion: `E2B envd ${info.envdVersion}`,
          policies: {
            network: plan.record,
            limits: limitsRecord(info),
            mounts: MOUNTS_RECORD,
            user: userRecord(options),
            lifetime: lifetimeRecord(options.timeoutMs, info, notes),
          },
          notes,
        };
        return new E2BDriver(sandbox, { audit, user: options.user === "root" ? "root" : undefined, requestTimeoutMs: resolved.requestTimeoutMs });
      } catch (error) {
        await sandbox.kill().catch(() => {});
        throw mapE2BError(error, { operation: "create a sandbox", sandboxId: sandbox.sandboxId, timeoutMs: resolved.requestTimeoutMs });
      }
    },

    async list(request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal }) {
      if (!resolved.apiKey) throw missingKeyError();
      return listE2BSandboxes(connection, request);
    },

    async connect(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<SandboxDriverV1> {
      if (!resolved.apiKey) throw missingKeyError();
      const { sandboxId, options, signal } = request;
      let sandbox: CodeInterpreterSandbox;
      let info: SandboxInfo;
      try {
        sandbox = await CodeInterpreterSandbox.connect(sandboxId, { ...connection, signal });
        info = await sandbox.getInfo({ requestTimeoutMs: resolved.requestTimeoutMs });
      } catch (error) {
        throw mapE2BError(error, { operation: "connect to a sandbox", sandboxId, timeoutMs: resolved.requestTimeoutMs });
      }
      const notes = [
        `Connected to an existing E2B sandbox (template ${info.templateId}); its policies were set by whoever created it and are read back from E2B.`,
      ];
      const reported = { allowInternetAccess: info.allowInternetAccess ?? null, network: info.network ?? null };
      const audit: DriverAudit = {
        backendVersion: `E2B envd ${info.envdVersion}`,
        policies: {
          network: {
            requested: null,
            applied: reported,
            enforcement: "As set when the sandbox was created, read back from E2B's getInfo (allowInternetAccess, network.allowOut/denyOut).",
          },
          limits: limitsRecord(info),
          mounts: MOUNTS_RECORD,
          user: userRecord(options),
          lifetime: lifetimeRecord(null, info, notes),
        },
        notes,
      };
      return new E2BDriver(sandbox, { audit, user: options.user === "root" ? "root" : undefined, requestTimeoutMs: resolved.requestTimeoutMs });
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

/** Alias of `createSandboxProvider`, in the style of AI SDK providers: `createSandbox(e2b({ apiKey }))`. */
export const e2b = createSandboxProvider;

export { E2B_WORKSPACE };
