import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BackendUnavailableError, CapabilityNotSupportedError, InvalidArgumentError, SbxError, UnsupportedSpecificationError } from "../errors/index.js";
import { backendsSupporting, getBackendManifest, listBackendManifests, registerBackendManifest } from "../v1/backend-registry.js";
import { capabilitiesSchema } from "../v1/capabilities.js";
import { createSandboxOptionsSchema, type CreateSandboxOptions, type ResolvedCreateOptions } from "../v1/options.js";
import type { BackendStatus, SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import type { CredentialSource } from "../v1/credentials.js";
import { createSandboxFromDriver } from "./create-sandbox-from-driver.js";
import { createSandboxWithCredentials, revokeOrphansBeforeIssuing, splitCredentialSources } from "./create-sandbox-with-credentials.js";
import { callAdapter, throwIfAborted } from "./guard.js";
import { validate } from "./validate.js";

/** Makes a provider from backend-specific settings. Adapter packages export one as `createSandboxProvider`. */
export type SandboxProviderFactory = (settings?: Record<string, unknown>) => SandboxProviderV1;

/** Order in which `"auto"` tries isolating backends. */
export const AUTO_PREFERENCE_ORDER: readonly string[] = ["docker", "e2b", "modal"];

const registeredFactories = new Map<string, SandboxProviderFactory>();

/**
 * Registers a provider factory for a URI scheme, so `createSandbox("scheme://...")` works for third-party
 * adapters (or to override how a first-party one is loaded). Also registers its capability manifest.
 */
export function registerProvider(scheme: string, factory: SandboxProviderFactory): void {
  if (typeof scheme !== "string" || !/^[a-z][a-z0-9+.-]*$/.test(scheme)) throw new InvalidArgumentError({ field: "scheme", message: `Invalid scheme ${JSON.stringify(scheme)}: use lowercase letters, digits, '+', '.', '-'.` });
  if (typeof factory !== "function") throw new InvalidArgumentError({ field: "factory", message: "Invalid factory: expected a function (settings) => SandboxProviderV1." });
  // Check the provider before registering anything, so a wrong-version adapter leaves no trace (checkProvider records the manifest).
  checkProvider(factory());
  registeredFactories.set(scheme, factory);
}

/** Splits `"docker://python:3.12-slim"` into scheme and target. */
export function parseTarget(target: string): { scheme: string; target: string } {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/.exec(target);
  if (!match) {
    throw new InvalidArgumentError({ field: "target", message: `Invalid target ${JSON.stringify(target)}: expected "scheme://target", for example "docker://python:3.12-slim", "e2b://code-interpreter-v1", "modal://python:3.12-slim", "fake://", or "auto".` });
  }
  return { scheme: match[1]!, target: match[2]! };
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
      const alternatives = listBackendManifests().map((manifest) => manifest.backend).filter((backend) => backend !== scheme);
      throw new BackendUnavailableError({
        backend: scheme,
        cause: error,
        remedy: installRemedy(packageName),
        alternatives,
        message: known
          ? `The ${scheme} backend's adapter package ${packageName} is not installed. ${installRemedy(packageName)} Other backends: ${alternatives.join(", ")} (detectBackends() says which are usable here).`
          : `Unknown backend scheme "${scheme}": no adapter is registered for it and ${packageName} could not be loaded. Known backends: ${listBackendManifests().map((manifest) => manifest.backend).join(", ")}.`,
      });
    }
    const factory = module.createSandboxProvider;
    if (typeof factory !== "function") {
      throw new BackendUnavailableError({ backend: scheme, remedy: `Update ${packageName}.`, message: `${packageName} does not export createSandboxProvider(); it is not an sbx adapter for this version of @sbx/core.` });
    }
    provider = (factory as SandboxProviderFactory)(settings);
  }
  return checkProvider(provider);
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
  registerBackendManifest({ backend: provider.backend, packageName: provider.packageName, capabilities: provider.capabilities, isolating: provider.isolating });
  return provider;
}

/** Refuses options that need capabilities the provider lacks: never weaken a policy that was asked for. */
function refuseUnsupportedPolicies(provider: SandboxProviderV1, options: ResolvedCreateOptions): void {
  const refuse = (capability: "EGRESS_ALLOWLIST" | "HOST_MOUNTS" | "RESOURCE_LIMITS", detail: string) => {
    throw new CapabilityNotSupportedError({ capability, backend: provider.backend, supportedBy: backendsSupporting(capability, provider.backend), detail });
  };
  if (options.network.allow && options.network.allow.length > 0 && !provider.capabilities.EGRESS_ALLOWLIST) {
    refuse("EGRESS_ALLOWLIST", "network.allow was given; the sandbox was not created rather than run with a different egress policy");
  }
  if (options.mounts.length > 0 && !provider.capabilities.HOST_MOUNTS) refuse("HOST_MOUNTS", "mounts were given");
  if (options.limits && Object.values(options.limits).some((value) => value !== undefined) && !provider.capabilities.RESOURCE_LIMITS) {
    refuse("RESOURCE_LIMITS", "limits were given and would not be enforced");
  }
}

function parseOptions(options: CreateSandboxOptions | undefined): { resolved: ResolvedCreateOptions; signal: AbortSignal | undefined; credentials: Map<string, CredentialSource> } {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new InvalidArgumentError({ field: "options", message: "Invalid options: expected an object." });
  }
  const split = splitCredentialSources(options ?? {});
  const { signal, ...resolved } = validate(createSandboxOptionsSchema, split.options, "options");
  return { resolved, signal, credentials: split.sources };
}

/**
 * Creates a sandbox. The target's URI scheme picks the backend, whose adapter is loaded only now:
 * `"docker://python:3.12-slim"`, `"e2b://code-interpreter-v1"`, `"fake://"`. `"auto"` (or no target) picks
 * the first usable isolating backend in `AUTO_PREFERENCE_ORDER`; the fake only with `allowFake: true`.
 * A provider object may be passed instead of a string.
 */
export async function createSandbox(target: string | SandboxProviderV1 = "auto", options?: CreateSandboxOptions): Promise<Sandbox> {
  const { resolved, signal, credentials } = parseOptions(options);
  throwIfAborted(signal);
  let provider: SandboxProviderV1;
  let providerTarget = "";
  if (typeof target === "object" && target !== null) provider = checkProvider(target);
  else if (typeof target !== "string") throw new InvalidArgumentError({ field: "target", message: "Invalid target: expected a string such as \"docker://python:3.12-slim\" or a provider object." });
  else if (target === "auto") provider = await pickAutomaticProvider(resolved, signal);
  else {
    const parsed = parseTarget(target);
    provider = await loadProvider(parsed.scheme, resolved.settings);
    providerTarget = parsed.target;
  }
  refuseUnsupportedPolicies(provider, resolved);
  if (credentials.size > 0) await revokeOrphansBeforeIssuing(credentials, signal);
  const secrets = Object.values(resolved.secrets);
  const createStartedAt = Date.now();
  const driver = await callAdapter(provider.backend, "create a sandbox", secrets, () => provider.create({ target: providerTarget, options: resolved, signal }));
  if (credentials.size > 0) return createSandboxWithCredentials({ driver, provider, target: providerTarget, options: resolved, sources: credentials, signal, createStartedAt });
  return createSandboxFromDriver(driver, { provider, target: providerTarget, options: resolved });
}

/** Attaches to a live sandbox by id (needs `RECONNECT`). `target` names the backend, for example `"docker://"`. */
export async function connectSandbox(target: string | SandboxProviderV1, sandboxId: string, options?: CreateSandboxOptions): Promise<Sandbox> {
  const { resolved, signal, credentials } = parseOptions(options);
  if (credentials.size > 0) throw new InvalidArgumentError({ field: `options.secrets.${[...credentials.keys()][0]}`, message: "Invalid options.secrets: credential() sources are issued by createSandbox() for the sandbox it creates; connectSandbox() does not issue or revoke them. Pass the value as a plain secret." });
  if (typeof sandboxId !== "string" || sandboxId.length === 0) throw new InvalidArgumentError({ field: "sandboxId", message: "Invalid sandboxId: expected a non-empty string." });
  if (typeof target !== "string" && (typeof target !== "object" || target === null)) throw new InvalidArgumentError({ field: "target", message: "Invalid target: expected a string such as \"docker://\" or a provider object." });
  const provider = typeof target === "string" ? await loadProvider(parseTarget(target).scheme, resolved.settings) : checkProvider(target);
  if (!provider.capabilities.RECONNECT || !provider.connect) {
    throw new CapabilityNotSupportedError({ capability: "RECONNECT", backend: provider.backend, supportedBy: backendsSupporting("RECONNECT", provider.backend) });
  }
  const driver = await callAdapter(provider.backend, "connect to a sandbox", Object.values(resolved.secrets), () => provider.connect!({ sandboxId, options: resolved, signal }));
  return createSandboxFromDriver(driver, { provider, target: typeof target === "string" ? parseTarget(target).target : "", options: resolved });
}

async function statusOf(backend: string, signal?: AbortSignal): Promise<BackendStatus> {
  const manifest = getBackendManifest(backend);
  try {
    const provider = await loadProvider(backend);
    return await provider.detect({ signal });
  } catch (error) {
    const remedy = SbxError.isInstance(error) && error instanceof BackendUnavailableError ? error.remedy : installRemedy(manifest?.packageName ?? `@sbx/${backend}`);
    return { backend, usable: false, reason: error instanceof Error ? error.message : String(error), remedy, isolating: manifest?.isolating ?? true };
  }
}

/** Reports which backends are usable here, and for each one that is not, why and how to fix it. */
export async function detectBackends(options?: { signal?: AbortSignal }): Promise<BackendStatus[]> {
  const names = new Set([...listBackendManifests().map((manifest) => manifest.backend), ...registeredFactories.keys()]);
  return Promise.all([...names].map((name) => statusOf(name, options?.signal)));
}

async function pickAutomaticProvider(options: ResolvedCreateOptions, signal?: AbortSignal): Promise<SandboxProviderV1> {
  const order = [...AUTO_PREFERENCE_ORDER, ...(options.allowFake ? ["fake"] : [])];
  const statuses: BackendStatus[] = [];
  for (const backend of order) {
    const status = await statusOf(backend, signal);
    statuses.push(status);
    if (status.usable) return loadProvider(backend, options.settings);
  }
  throw new BackendUnavailableError({
    backend: "auto",
    remedy: statuses.map((status) => `${status.backend}: ${status.remedy}`).join(" "),
    alternatives: options.allowFake ? [] : ["fake (pass allowFake: true; it is not a security boundary)"],
    message: `No isolating backend is usable here.\n${statuses.map((status) => `- ${status.backend}: ${status.reason} ${status.remedy}`).join("\n")}${options.allowFake ? "" : "\nTo run on the in-process fake instead (not a security boundary), pass { allowFake: true } or use \"fake://\"."}`,
  });
}
