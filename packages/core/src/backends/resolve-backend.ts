import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  BackendUnavailableError,
  CapabilityNotSupportedError,
  InvalidArgumentError,
  isSbxError,
  UnsupportedSpecificationError,
} from "../errors/index.js";
import { backendsSupporting, getBackendManifest, listBackendManifests, registerBackendManifest } from "./backend-registry.js";
import { capabilitiesSchema } from "../v1/capabilities.js";
import { createSandboxOptionsSchema, type CreateSandboxOptions, type ResolvedCreateOptions } from "../v1/options.js";
import type { BackendStatus, SandboxDriverV1, SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import type { CredentialSource } from "../v1/credentials.js";
import { createSandboxFromDriver } from "../sandbox/create-sandbox-from-driver.js";
import { writeInitialFiles } from "../sandbox/write-initial-files.js";
import type { InitialFile } from "../v1/initial-files.js";
import { createSandboxWithCredentials, revokeOrphansBeforeIssuing, splitCredentialSources } from "../credentials/create-sandbox-with-credentials.js";
import { refuseCapabilityMethodMismatch } from "./capability-method-check.js";
import { callAdapter, throwIfAborted } from "../security/guard.js";
import { refuseUnredactableSecrets } from "../security/unredactable-secrets.js";
import { refuseUnknownSettings } from "./unknown-settings.js";
import { validate } from "../security/validate.js";
import type { SandboxLogger } from "../v1/logging.js";
import { loggedCall, resolveLogger } from "./backend-logging.js";
import { AUTO_PREFERENCE_ORDER, BACKENDS_ENVIRONMENT_VARIABLE, orderAutoBackends } from "./backend-preference.js";

/** Makes a provider from backend-specific settings. Adapter packages export one as `createSandboxProvider`. */
export type SandboxProviderFactory = (settings?: Record<string, unknown>) => SandboxProviderV1;

export { AUTO_PREFERENCE_ORDER, BACKENDS_ENVIRONMENT_VARIABLE } from "./backend-preference.js";

const registeredFactories = new Map<string, SandboxProviderFactory>();
/** Whether each registered scheme's provider is an isolation boundary (so `"auto"` may consider it). */
const registeredIsolating = new Map<string, boolean>();

const SCHEME_PATTERN = /^[a-z][a-z0-9+.-]*$/i;

/**
 * Registers a provider factory for a URI scheme, so `createSandbox("scheme://...")` works for third-party
 * adapters (or to override how a first-party one is loaded). Also registers its capability manifest.
 */
export function registerProvider(scheme: string, factory: SandboxProviderFactory): void {
  if (typeof scheme !== "string" || !SCHEME_PATTERN.test(scheme))
    throw new InvalidArgumentError({
      field: "scheme",
      message: `Invalid scheme ${JSON.stringify(scheme)}: use letters, digits, '+', '.', '-', starting with a letter (schemes are case-insensitive).`,
    });
  if (typeof factory !== "function")
    throw new InvalidArgumentError({ field: "factory", message: "Invalid factory: expected a function (settings) => SandboxProviderV1." });
  // Check the provider before registering anything, so a wrong-version adapter leaves no trace (checkProvider records the manifest).
  const provider = checkProvider(factory());
  const normalized = scheme.toLowerCase();
  registeredFactories.set(normalized, factory);
  registeredIsolating.set(normalized, provider.isolating !== false);
}

/**
 * The backends `createSandbox("auto")` tries, in order: the `backends` option, else `SBX_BACKENDS`, else
 * `AUTO_PREFERENCE_ORDER` followed by every isolating provider registered with `registerProvider`, then the fake
 * when `allowFake` is true. A stated preference is also a limit: only the backends named are tried.
 */
export function autoBackendOrder(
  options: { backends?: readonly string[] | string; allowFake?: boolean; environment?: Readonly<Record<string, string | undefined>> } = {},
): string[] {
  return orderAutoBackends({ ...options, registered: registeredIsolating }).order;
}

/**
 * Splits `"docker://python:3.12-slim"` into scheme and target. The scheme is case-insensitive (returned in lower
 * case); whitespace anywhere is refused rather than trimmed, since a stray space is a configuration mistake.
 */
export function parseTarget(target: string): { scheme: string; target: string } {
  if (typeof target === "string" && /\s/.test(target)) {
    throw new InvalidArgumentError({
      field: "target",
      message: `Invalid target ${JSON.stringify(target)}: it contains whitespace. Remove it (sbx does not trim targets), for example "docker://python:3.12-slim".`,
    });
  }
  const match = typeof target === "string" ? /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(target) : null;
  if (!match) {
    throw new InvalidArgumentError({
      field: "target",
      message: `Invalid target ${JSON.stringify(target)}: expected "scheme://target", for example "docker://python:3.12-slim", "e2b://code-interpreter-v1", "modal://python:3.12-slim", "fake://", or "auto".`,
    });
  }
  return { scheme: match[1]!.toLowerCase(), target: match[2]! };
}

async function importAdapter(packageName: string): Promise<Record<string, unknown>> {
  try {
    return (await import(packageName)) as Record<string, unknown>;
  } catch (firstError) {
    // The adapter may be installed next to the application rather than next to @sbx/core.
    try {
      const resolved = createRequire(join(process.cwd(), "noop.js")).resolve(packageName);
      return (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
    } catch {
      throw firstError;
    }
  }
}

function installRemedy(packageName: string): string {
  return `Install the adapter: npm install ${packageName} (or pnpm add ${packageName}).`;
}

/** Loads the provider for a scheme: a registered factory, or the adapter package `@sbx/<scheme>` imported on first use. */
export async function loadProvider(scheme: string, settings: Record<string, unknown> = {}): Promise<SandboxProviderV1> {
  scheme = typeof scheme === "string" ? scheme.toLowerCase() : scheme;
  const registered = registeredFactories.get(scheme);
  let provider: SandboxProviderV1;
  if (registered) provider = registered(settings);
  else {
    const packageName = getBackendManifest(scheme)?.packageName ?? `@sbx/${scheme}`;
    let module: Record<string, unknown>;
    try {
      module = await importAdapter(packageName);
    } catch (error) {
      const known = getBackendManifest(scheme) !== undefined;
      const knownSchemes = knownBackendSchemes();
      if (!known) {
        // Not a backend sbx knows: a typo or a third-party adapter that was never registered. Installing a package
        // named after the scheme is not the fix, and retrying will not help.
        throw new InvalidArgumentError({
          field: "target",
          backend: scheme,
          cause: error,
          message: `Unknown backend scheme "${scheme}". Known schemes: ${knownSchemes.map((name) => `${name}://`).join(", ")}. For a third-party adapter, call registerProvider("${scheme}", createSandboxProvider) before createSandbox().`,
        });
      }
      const alternatives = knownSchemes.filter((backend) => backend !== scheme);
      throw new BackendUnavailableError({
        backend: scheme,
        cause: error,
        retryable: false,
        remedy: installRemedy(packageName),
        alternatives,
        message: `The ${scheme} backend's adapter package ${packageName} is not installed. ${installRemedy(packageName)} Other backends: ${alternatives.join(", ")} (detectBackends() says which are usable here).`,
      });
    }
    const factory = module.createSandboxProvider;
    if (typeof factory !== "function") {
      throw new BackendUnavailableError({
        backend: scheme,
        retryable: false,
        remedy: `Update ${packageName}.`,
        message: `${packageName} does not export createSandboxProvider(); it is not an sbx adapter for this version of @sbx/core.`,
      });
    }
    provider = (factory as SandboxProviderFactory)(settings);
  }
  return checkProvider(provider);
}

/** Every scheme `createSandbox` accepts right now: first-party and registered backends, sorted. */
function knownBackendSchemes(): string[] {
  return [...new Set([...listBackendManifests().map((manifest) => manifest.backend), ...registeredFactories.keys()])].sort();
}

/** Verifies a provider speaks this protocol version and records its manifest. */
export function checkProvider(provider: SandboxProviderV1): SandboxProviderV1 {
  if (!provider || (provider as { specificationVersion?: unknown }).specificationVersion !== "sbx-v1") {
    throw new UnsupportedSpecificationError({
      backend: (provider as { backend?: string } | undefined)?.backend,
      message: `The provider implements specification ${JSON.stringify((provider as { specificationVersion?: unknown } | undefined)?.specificationVersion)}, but this @sbx/core speaks "sbx-v1". Upgrade @sbx/core or the adapter so they match.`,
    });
  }
  if (typeof provider.backend !== "string" || !capabilitiesSchema.safeParse(provider.capabilities).success) {
    throw new UnsupportedSpecificationError({
      backend: typeof provider.backend === "string" ? provider.backend : undefined,
      message: `The provider claims "sbx-v1" but its backend name or capabilities manifest is malformed; build the manifest with defineCapabilities().`,
    });
  }
  refuseCapabilityMethodMismatch({ holder: "provider", target: provider, capabilities: provider.capabilities, backend: provider.backend });
  registerBackendManifest({
    backend: provider.backend,
    packageName: provider.packageName,
    capabilities: provider.capabilities,
    isolating: provider.isolating,
  });
  return provider;
}

/** Refuses options that need capabilities the provider lacks: never weaken a policy that was asked for. */
export function refuseUnsupportedPolicies(provider: SandboxProviderV1, options: ResolvedCreateOptions): void {
  const refuse = (capability: "EGRESS_ALLOWLIST" | "HOST_MOUNTS" | "RESOURCE_LIMITS" | "SNAPSHOTS", detail: string) => {
    throw new CapabilityNotSupportedError({
      capability,
      backend: provider.backend,
      supportedBy: backendsSupporting(capability, provider.backend),
      detail,
    });
  };
  if (options.network.allow && options.network.allow.length > 0 && !provider.capabilities.EGRESS_ALLOWLIST) {
    refuse("EGRESS_ALLOWLIST", "network.allow was given; the sandbox was not created rather than run with a different egress policy");
  }
  if (options.mounts.length > 0 && !provider.capabilities.HOST_MOUNTS) refuse("HOST_MOUNTS", "mounts were given");
  if (options.limits && Object.values(options.limits).some((value) => value !== undefined) && !provider.capabilities.RESOURCE_LIMITS) {
    refuse("RESOURCE_LIMITS", "limits were given and would not be enforced");
  }
  if (options.fromSnapshot !== undefined && !provider.capabilities.SNAPSHOTS) refuse("SNAPSHOTS", "fromSnapshot was given");
}

/** Validates `createSandbox` options: the resolved options, the caller-side parts, and the credential sources taken out of `secrets`. */
export function parseOptions(options: CreateSandboxOptions | undefined): {
  resolved: ResolvedCreateOptions;
  signal: AbortSignal | undefined;
  credentials: Map<string, CredentialSource>;
  backends: string[] | undefined;
  logger: SandboxLogger | undefined;
  files: InitialFile[];
} {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new InvalidArgumentError({ field: "options", message: "Invalid options: expected an object." });
  }
  const split = splitCredentialSources(options ?? {});
  const { signal, backends, logger, files, ...resolved } = validate(createSandboxOptionsSchema, split.options, "options");
  refuseUnredactableSecrets(resolved.secrets);
  return { resolved, signal, credentials: split.sources, backends, logger: resolveLogger(logger), files: files ?? [] };
}

/**
 * Creates a sandbox. The target's URI scheme picks the backend, whose adapter is loaded only now:
 * `"docker://python:3.12-slim"`, `"e2b://code-interpreter-v1"`, `"fake://"`. `"auto"` (or no target) picks
 * the first usable isolating backend in `AUTO_PREFERENCE_ORDER`; the fake only with `allowFake: true`.
 * A provider object may be passed instead of a string.
 */
export async function createSandbox(target: string | SandboxProviderV1 = "auto", options?: CreateSandboxOptions): Promise<Sandbox> {
  const { resolved, signal, credentials, backends: preference, logger, files } = parseOptions(options);
  throwIfAborted(signal);
  let provider: SandboxProviderV1;
  let providerTarget = "";
  if (typeof target === "object" && target !== null) provider = checkProvider(target);
  else if (typeof target !== "string")
    throw new InvalidArgumentError({
      field: "target",
      message: 'Invalid target: expected a string such as "docker://python:3.12-slim" or a provider object.',
    });
  else if (target.toLowerCase() === "auto") provider = await pickAutomaticProvider(resolved, preference, signal);
  else {
    const parsed = parseTarget(target);
    provider = await loadProvider(parsed.scheme, resolved.settings);
    providerTarget = parsed.target;
  }
  refuseUnknownSettings(provider, resolved.settings);
  refuseUnsupportedPolicies(provider, resolved);
  if (credentials.size > 0) await revokeOrphansBeforeIssuing(credentials, signal);
  const secrets = Object.values(resolved.secrets);
  const createStartedAt = Date.now();
  const createdDriver = await callAdapter(provider.backend, "create a sandbox", secrets, () =>
    loggedCall(logger, secrets, { backend: provider.backend, operation: "create", detail: providerTarget }, () =>
      provider.create({ target: providerTarget, options: resolved, signal }),
    ),
  );
  await wrapOrDestroy(createdDriver, () =>
    refuseCapabilityMethodMismatch({ holder: "driver", target: createdDriver, capabilities: provider.capabilities, backend: provider.backend }),
  );
  const driver = createdDriver;
  const sandbox =
    credentials.size > 0
      ? await createSandboxWithCredentials({
          driver,
          provider,
          target: providerTarget,
          options: resolved,
          sources: credentials,
          signal,
          createStartedAt,
          logger,
        })
      : await wrapOrDestroy(driver, () =>
          createSandboxFromDriver(driver, {
            provider,
            target: providerTarget,
            options: resolved,
            logger,
            lifetimeEndsAt: createStartedAt + resolved.timeoutMs,
          }),
        );
  return writeInitialFiles(sandbox, files, signal);
}

/**
 * Wraps a just-created driver, destroying the backend's sandbox when the wrapping refuses it: a refused create
 * leaves nothing running behind the rejection.
 */
export async function wrapOrDestroy<Result>(driver: SandboxDriverV1, wrap: () => Result): Promise<Result> {
  try {
    return wrap();
  } catch (error) {
    await driver.destroy().catch(() => {});
    throw error;
  }
}

/** Attaches to a live sandbox by id (needs `RECONNECT`). `target` names the backend, for example `"docker://"`. */
export async function connectSandbox(target: string | SandboxProviderV1, sandboxId: string, options?: CreateSandboxOptions): Promise<Sandbox> {
  const { resolved, signal, credentials, logger, files } = parseOptions(options);
  if (files.length > 0)
    throw new InvalidArgumentError({
      field: "options.files",
      message:
        "Invalid options.files: initial files are written by createSandbox() into the sandbox it creates; connectSandbox() attaches to a live sandbox as it is. Write them with sandbox.files.write.",
    });
  if (credentials.size > 0)
    throw new InvalidArgumentError({
      field: `options.secrets.${[...credentials.keys()][0]}`,
      message:
        "Invalid options.secrets: credential() sources are issued by createSandbox() for the sandbox it creates; connectSandbox() does not issue or revoke them. Pass the value as a plain secret.",
    });
  if (typeof sandboxId !== "string" || sandboxId.length === 0)
    throw new InvalidArgumentError({ field: "sandboxId", message: "Invalid sandboxId: expected a non-empty string." });
  if (typeof target !== "string" && (typeof target !== "object" || target === null))
    throw new InvalidArgumentError({ field: "target", message: 'Invalid target: expected a string such as "docker://" or a provider object.' });
  const provider = typeof target === "string" ? await loadProvider(parseTarget(target).scheme, resolved.settings) : checkProvider(target);
  refuseUnknownSettings(provider, resolved.settings);
  if (!provider.capabilities.RECONNECT || !provider.connect) {
    throw new CapabilityNotSupportedError({
      capability: "RECONNECT",
      backend: provider.backend,
      supportedBy: backendsSupporting("RECONNECT", provider.backend),
    });
  }
  const secrets = Object.values(resolved.secrets);
  const connectedDriver = await callAdapter(provider.backend, "connect to a sandbox", secrets, () =>
    loggedCall(logger, secrets, { backend: provider.backend, operation: "connect", sandboxId }, () =>
      provider.connect!({ sandboxId, options: resolved, signal }),
    ),
  );
  // An attached sandbox is not ours to destroy: a mismatched driver is refused and the sandbox left as it was.
  refuseCapabilityMethodMismatch({ holder: "driver", target: connectedDriver, capabilities: provider.capabilities, backend: provider.backend });
  return createSandboxFromDriver(connectedDriver, {
    provider,
    target: typeof target === "string" ? parseTarget(target).target : "",
    options: resolved,
    reconnected: true,
    logger,
  });
}

/** A backend's status, and the provider that reported it when it loaded (so the caller can create with that very one). */
interface LoadedStatus {
  readonly status: BackendStatus;
  readonly provider: SandboxProviderV1 | undefined;
}

/**
 * Loads a backend's provider with `settings` and asks it whether it is usable. A load failure becomes an unusable
 * status; a `BackendUnavailableError` is recognised by its code (the marker rule: `instanceof` fails across two
 * copies of `@sbx/core`), so its remedy is kept.
 */
async function loadAndDetect(backend: string, options: { settings?: Record<string, unknown>; signal?: AbortSignal }): Promise<LoadedStatus> {
  const manifest = getBackendManifest(backend);
  let provider: SandboxProviderV1 | undefined;
  try {
    provider = await loadProvider(backend, options.settings);
    return { status: await provider.detect({ signal: options.signal }), provider };
  } catch (error) {
    const remedy = remedyOf(error) ?? installRemedy(manifest?.packageName ?? `@sbx/${backend}`);
    const status = {
      backend,
      usable: false,
      reason: error instanceof Error ? error.message : String(error),
      remedy,
      isolating: manifest?.isolating ?? true,
    };
    return { status, provider: undefined };
  }
}

/** The remedy a `BackendUnavailableError` (from any copy of `@sbx/core`) carries, else undefined. */
function remedyOf(error: unknown): string | undefined {
  if (!isSbxError(error, "SBX_BACKEND_UNAVAILABLE")) return undefined;
  const remedy = (error as { remedy?: unknown }).remedy;
  return typeof remedy === "string" ? remedy : undefined;
}

/** Reports which backends are usable here, and for each one that is not, why and how to fix it. */
export async function detectBackends(options?: { signal?: AbortSignal }): Promise<BackendStatus[]> {
  const names = new Set([...listBackendManifests().map((manifest) => manifest.backend), ...registeredFactories.keys()]);
  const loaded = await Promise.all([...names].map((name) => loadAndDetect(name, { signal: options?.signal })));
  return loaded.map((entry) => entry.status);
}

/** The provider `"auto"` picks: the first usable backend in the preference order (see `autoBackendOrder`). */
export async function pickAutomaticProvider(
  options: ResolvedCreateOptions,
  backends: readonly string[] | undefined,
  signal?: AbortSignal,
): Promise<SandboxProviderV1> {
  const { order, source } = orderAutoBackends({ backends, allowFake: options.allowFake, registered: registeredIsolating });
  const statuses: BackendStatus[] = [];
  for (const backend of order) {
    const isolating = AUTO_PREFERENCE_ORDER.includes(backend) || (registeredIsolating.get(backend) ?? getBackendManifest(backend)?.isolating ?? true);
    if (!isolating && !options.allowFake) {
      statuses.push({
        backend,
        usable: false,
        isolating,
        reason: `${backend} is not a security boundary, so "auto" uses it only with allowFake: true.`,
        remedy: "Pass { allowFake: true } to accept it.",
      });
      continue;
    }
    // Detect with the provider built from the caller's settings, and create with that same provider.
    const { status, provider } = await loadAndDetect(backend, { settings: options.settings, signal });
    if (source !== "default" && !registeredFactories.has(backend) && getBackendManifest(backend) === undefined && !status.usable) {
      throw new InvalidArgumentError({
        field: source === "option" ? "backends" : BACKENDS_ENVIRONMENT_VARIABLE,
        message: `Invalid ${source === "option" ? "backends" : BACKENDS_ENVIRONMENT_VARIABLE}: "${backend}" is not a known backend. Known: ${knownBackendSchemes().join(", ")}; register third-party ones with registerProvider().`,
      });
    }
    statuses.push(status);
    if (status.usable && provider) return provider;
  }
  throw new BackendUnavailableError({
    backend: "auto",
    remedy: statuses.map((status) => `${status.backend}: ${status.remedy}`).join(" "),
    alternatives: options.allowFake ? [] : ["fake (pass allowFake: true; it is not a security boundary)"],
    message: `No ${source === "default" ? "isolating " : ""}backend is usable here${source === "default" ? "" : ` among those preferred by ${source === "option" ? "the backends option" : BACKENDS_ENVIRONMENT_VARIABLE} (${order.join(", ")})`}.\n${statuses.map((status) => `- ${status.backend}: ${status.reason} ${status.remedy}`).join("\n")}${options.allowFake ? "" : '\nTo run on the in-process fake instead (not a security boundary), pass { allowFake: true } or use "fake://".'}`,
  });
}
