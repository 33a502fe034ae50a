import type { Capabilities, CapabilityName } from "./capabilities.js";
import { defineCapabilities } from "./capabilities.js";

/** What core knows about a backend without loading its adapter. */
export interface BackendManifest {
  /** URI scheme and backend name, for example `"docker"`. */
  readonly backend: string;
  /** npm package that implements it, for example `"@sbx/docker"`. */
  readonly packageName: string;
  /** The capability manifest. */
  readonly capabilities: Capabilities;
  /** True when the backend is an isolation boundary (used by `"auto"`); false for the fake. */
  readonly isolating: boolean;
}

/**
 * Manifests of the first-party adapters, known to core so `supportedBy` can name backends that are not installed.
 * Each first-party adapter re-registers its own manifest when loaded (which overrides this copy), and
 * `contract-tests/manifests.test.ts` fails if a copy here drifts from the adapter's. See adr/0006.
 */
const FIRST_PARTY_MANIFESTS: readonly BackendManifest[] = [
  {
    backend: "docker",
    packageName: "@sbx/docker",
    isolating: true,
    capabilities: defineCapabilities({
      STATEFUL_CODE: true,
      RICH_RESULTS: true,
      EGRESS_ALLOWLIST: true,
      BACKGROUND_COMMANDS: true,
      STDIN: true,
      HOST_MOUNTS: true,
      RECONNECT: true,
      RESOURCE_LIMITS: true,
      languages: ["python"],
    }),
  },
  {
    backend: "e2b",
    packageName: "@sbx/e2b",
    isolating: true,
    capabilities: defineCapabilities({
      STATEFUL_CODE: true,
      RICH_RESULTS: true,
      EGRESS_ALLOWLIST: true,
      BACKGROUND_COMMANDS: true,
      STDIN: true,
      RECONNECT: true,
      languages: ["python"],
    }),
  },
  {
    backend: "modal",
    packageName: "@sbx/modal",
    isolating: true,
    capabilities: defineCapabilities({
      EGRESS_ALLOWLIST: true,
      BACKGROUND_COMMANDS: true,
      STDIN: true,
      RECONNECT: true,
      RESOURCE_LIMITS: true,
      languages: ["python"],
    }),
  },
  {
    backend: "fake",
    packageName: "@sbx/fake",
    isolating: false,
    capabilities: defineCapabilities({
      STATEFUL_CODE: true,
      EGRESS_ALLOWLIST: true,
      BACKGROUND_COMMANDS: true,
      STDIN: true,
      HOST_MOUNTS: true,
      languages: ["python"],
    }),
  },
];

const registry = new Map<string, BackendManifest>(FIRST_PARTY_MANIFESTS.map((manifest) => [manifest.backend, manifest]));

/**
 * Registers (or replaces) a backend's manifest. Adapters call this when their provider is created, so
 * `supportedBy` stays right as manifests change, without core depending on adapter packages.
 */
export function registerBackendManifest(manifest: BackendManifest): void {
  registry.set(manifest.backend, manifest);
}

/** Every known backend manifest: first-party ones plus any registered, the registered copy winning. */
export function listBackendManifests(): BackendManifest[] {
  return [...registry.values()];
}

/** The manifest of one backend, if known. */
export function getBackendManifest(backend: string): BackendManifest | undefined {
  return registry.get(backend);
}

/** Backends known to support a capability (or a `runCode` language when `capability` is `"language:<name>"`), excluding `except`. */
export function backendsSupporting(capability: CapabilityName | `language:${string}`, except?: string): string[] {
  const names: string[] = [];
  for (const manifest of registry.values()) {
    if (manifest.backend === except) continue;
    const supported = isLanguageCapability(capability)
      ? manifest.capabilities.languages.includes(capability.slice("language:".length))
      : manifest.capabilities[capability] === true;
    if (supported) names.push(manifest.backend);
  }
  return names.sort();
}

function isLanguageCapability(capability: string): capability is `language:${string}` {
  return capability.startsWith("language:");
}

/** The first-party manifests as shipped in this version of core (for drift tests). */
export function firstPartyManifests(): readonly BackendManifest[] {
  return FIRST_PARTY_MANIFESTS;
}
